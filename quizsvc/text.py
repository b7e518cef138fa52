"""Bilingual content: text carried in both languages, and the one picker for it.

Interface strings (buttons, error messages) are English msgids translated by
Flask-Babel at the edges; content that the core computes or the bank stores
(question text, grader feedback, misconception explanations) is data in both
languages, a mapping {"zh-CN": ..., "en": ...}, and `pick` chooses from it.
"""

from __future__ import annotations

from collections.abc import Mapping

LANGUAGES = ("zh-CN", "en")
DEFAULT_LANGUAGE = "zh-CN"

Bilingual = Mapping[str, str]


def pick(text: Bilingual | str | None, lang: str) -> str:
    """Return `text` in `lang`; the default language, then any language, if missing."""
    if text is None:
        return ""
    if isinstance(text, str):
        return text
    return (
        text.get(lang)
        or text.get(DEFAULT_LANGUAGE)
        or next((value for value in text.values() if value), "")
    )


def bilingual(zh: str, en: str) -> dict[str, str]:
    """Build a content mapping from its Chinese and English forms."""
    return {"zh-CN": zh, "en": en}
