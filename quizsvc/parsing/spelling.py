"""How people type: fold full-width input and Unicode signs to plain ASCII."""

from __future__ import annotations

import unicodedata

# Full-width punctuation that Chinese input methods type, mapped to ASCII.
_TRANSLATE = str.maketrans(
    {
        "，": ",",
        "、": ",",
        "；": ";",
        "。": ".",
        "（": "(",
        "）": ")",
        "［": "[",
        "］": "]",
        "【": "[",
        "】": "]",
        "−": "-",
        "–": "-",
        "—": "-",
        "﹣": "-",
        "＋": "+",
        "／": "/",
        "　": " ",
    }
)


def normalize_text(text: str) -> str:
    """Fold full-width characters and Unicode minus signs to plain ASCII."""
    return unicodedata.normalize("NFKC", text).translate(_TRANSLATE)
