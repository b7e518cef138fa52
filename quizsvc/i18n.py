"""Interface language: zh-CN by default, English on request.

Interface strings are English msgids translated by Flask-Babel; question text
comes from the bank, which carries both languages itself.
"""

from __future__ import annotations

from flask import Flask, g, request, session
from flask_babel import Babel
from flask_login import current_user

from quizsvc.db import begin_reading
from quizsvc.services.settings import load_settings
from quizsvc.text import DEFAULT_LANGUAGE, pick

SUPPORTED = {"zh-CN": "zh_Hans_CN", "en": "en"}

babel = Babel()


def current_language() -> str:
    """The language of this request as a bank key: "zh-CN" or "en"."""
    if "language" in g:
        return g.language
    chosen = request.args.get("lang")
    if chosen in SUPPORTED:
        session["lang"] = chosen
    language = chosen if chosen in SUPPORTED else session.get("lang")
    if language not in SUPPORTED:
        user_language = getattr(g, "user_language", None)
        language = user_language if user_language in SUPPORTED else DEFAULT_LANGUAGE
    g.language = language
    return language


def select_locale() -> str:
    """Flask-Babel's locale selector."""
    return SUPPORTED[current_language()]


def localized(text: dict[str, str] | str) -> str:
    """Pick the current language out of a {"zh-CN": ..., "en": ...} mapping."""
    return pick(text, current_language())


def use_learner_language() -> None:
    """Let a signed-in learner's language setting choose the interface language."""
    if request.endpoint == "static" or not current_user.is_authenticated:
        return
    # Signing in opened the request's read phase (see db.begin_reading).
    g.user_language = load_settings(begin_reading(), current_user.user).language


def init_app(app: Flask) -> None:
    """Bind Flask-Babel and expose the language helpers to templates."""
    app.config.setdefault("BABEL_DEFAULT_LOCALE", "zh_Hans_CN")
    babel.init_app(app, locale_selector=select_locale)
    app.before_request(use_learner_language)
    app.jinja_env.globals.update(current_language=current_language, localized=localized)
