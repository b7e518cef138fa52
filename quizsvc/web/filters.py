"""Template filters and globals shared by every page."""

from __future__ import annotations

import math
import re
from datetime import datetime
from zoneinfo import ZoneInfo

from flask import Flask
from flask_babel import gettext
from flask_login import current_user
from markupsafe import Markup, escape

from quizsvc import item_types
from quizsvc.bank.markup import math_html
from quizsvc.formatting import format_number
from quizsvc.i18n import current_language, localized

DEFAULT_TIMEZONE = "Asia/Shanghai"
# Han characters and CJK punctuation: text people wrote in Chinese.
_CHINESE = re.compile(r"[\u3000-\u303f\u3400-\u9fff\uf900-\ufaff\uff00-\uffef]")


def answer_cell(value) -> str:
    """Show one answer entry: 4 decimals, -inf, or "undefined"."""
    if value is None:
        return gettext("undefined")
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, (int, float)):
        number = float(value)
        if number.is_integer() and not math.isinf(number):
            return str(int(number))
        return format_number(number)
    return str(value)


def local_datetime(moment: datetime | None) -> str:
    """Format a UTC time in the signed-in learner's time zone."""
    if moment is None:
        return ""
    zone = DEFAULT_TIMEZONE
    if current_user and current_user.is_authenticated:
        zone = current_user.user.timezone or DEFAULT_TIMEZONE
    return moment.astimezone(ZoneInfo(zone)).strftime("%Y-%m-%d %H:%M")


def misconception_text(name: str) -> str:
    """The explanation of a named misconception in the page's language."""
    from quizsvc.grading import MISCONCEPTIONS

    entry = MISCONCEPTIONS.get(name)
    if entry is None:
        return name
    text = entry.get("explanation", entry) if isinstance(entry, dict) else entry
    return localized(text) if isinstance(text, dict) else str(text)


def misconception_title(name: str) -> str:
    """The short name of a misconception in the page's language (else its id)."""
    from quizsvc.grading import MISCONCEPTION_TITLES

    entry = MISCONCEPTION_TITLES.get(name)
    return localized(entry) if entry else name


def text_lang(text) -> Markup:
    """` lang="zh-CN"` for Chinese that people wrote (names, explanations) shown on
    a page in another language, so a screen reader reads it with a Chinese voice."""
    if text and current_language() != "zh-CN" and _CHINESE.search(str(text)):
        return Markup(' lang="zh-CN"')
    return Markup("")


def lang_span(text) -> Markup:
    """The text, escaped, inside a `lang="zh-CN"` span when `text_lang` asks for one."""
    marked = text_lang(text)
    return Markup(f"<span{marked}>{escape(text)}</span>") if marked else escape(text)


def typed_answer(text: str | None, item_id: str) -> str:
    """An answer as a person reads it, in the page's language: option and step
    texts instead of their ids, matrices as rows of plain numbers."""
    from quizsvc.catalog import get_bank

    question = get_bank().questions.get(item_id)
    return item_types.readable_answer(question, text, current_language())


def render_math(text) -> Markup:
    """Show a bank text with its caret powers set as superscripts (escaped)."""
    if text is None:
        return Markup("")
    return Markup(math_html(str(text)))


def init_app(app: Flask) -> None:
    """Register the filters and globals."""
    app.add_template_filter(format_number, "matrix_cell")
    app.add_template_filter(answer_cell, "answer_cell")
    app.add_template_filter(local_datetime, "local_datetime")
    app.add_template_filter(render_math, "math")
    app.add_template_filter(text_lang, "text_lang")
    app.add_template_filter(lang_span, "lang_span")
    app.add_template_global(typed_answer, "typed_answer")
    app.add_template_global(misconception_text, "misconception_text")
    app.add_template_global(misconception_title, "misconception_title")
