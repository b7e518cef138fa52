"""How the bank writes mathematics, and how a page shows it.

The bank's texts are plain Unicode that reads well as it is (in the API, the
exports and `quizsvc questions show`): ``QKᵀ/√d``, ``Sᵢⱼ``, ``k₀``, ``−∞``,
``e⁰``. Where Unicode has no superscript, a power is written with a caret: one
token after it (``e^0.7071``, ``Tk^-1``) or a parenthesised group
(``e^(−mᵢ)``). Braces never appear: they would show as typed.

`math_html` turns that text into HTML for a page: every character escaped,
and each caret power set as ``<sup>…</sup>`` (the parentheses of a group
dropped). `notation_problems` says what an author wrote that would not render.
"""

from __future__ import annotations

import html
import re

__all__ = ["math_html", "notation_problems"]

# ^(…) with one level of nested parentheses, or ^ and one signed token.
_POWER = re.compile(
    r"\^(?:\((?P<group>[^()]*(?:\([^()]*\)[^()]*)*)\)"
    r"|(?P<token>[−\-+]?[0-9A-Za-z]+(?:\.[0-9]+)?))"
)


def math_html(text: str) -> str:
    """Return `text` as escaped HTML with caret powers as superscripts."""
    parts, position = [], 0
    for match in _POWER.finditer(text):
        parts.append(html.escape(text[position : match.start()]))
        exponent = match.group("group") or match.group("token") or ""
        parts.append(f"<sup>{html.escape(exponent)}</sup>")
        position = match.end()
    parts.append(html.escape(text[position:]))
    return "".join(parts)


def notation_problems(text: str) -> list[str]:
    """Return what in `text` would not render as meant (empty when all is well)."""
    found = []
    brace = re.search(r"[{}]", text)
    if brace:
        found.append(
            f"a brace near {_near(text, brace.start())!r} would show as typed: "
            "write a power as ^x or ^(…)"
        )
    for caret in re.finditer(r"\^", text):
        if not _POWER.match(text, caret.start()):
            found.append(
                f"a ^ near {_near(text, caret.start())!r} has no exponent after "
                "it: write ^x or ^(…) with matched parentheses"
            )
            break
    return found


def _near(text: str, at: int, width: int = 8) -> str:
    return text[max(0, at - width) : at + width].replace("\n", " ")
