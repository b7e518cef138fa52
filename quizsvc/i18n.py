"""Interface language: zh-CN by default, English on request.

Interface strings are English msgids translated by Flask-Babel; question text
comes from the bank, which carries both languages itself.
"""

from __future__ import annotations

from flask import Flask, g, request, session
from flask_babel import Babel, refresh
from flask_login import current_user
from sqlalchemy.exc import SQLAlchemyError

from quizsvc.db import begin_reading
from quizsvc.services.settings import load_settings
from quizsvc.text import DEFAULT_LANGUAGE, pick

SUPPORTED = {"zh-CN": "zh_Hans_CN", "en": "en"}
# What an Accept-Language header may ask for, and the language that gives.
_ACCEPTED = {"zh-CN": "zh-CN", "zh": "zh-CN", "en": "en"}

babel = Babel()


def current_language() -> str:
    """Return the language of this request as a bank key: "zh-CN" or "en".

    In order: `?lang=` (which the session then remembers), the session's
    choice, the signed-in learner's setting, the `Accept-Language` header
    (API clients and first visits send it), then zh-CN.
    """
    if "language" in g:
        return g.language
    chosen = request.args.get("lang")
    if chosen in SUPPORTED:
        session["lang"] = chosen
    language = chosen if chosen in SUPPORTED else session.get("lang")
    if language not in SUPPORTED:
        language = _learner_language() or _accepted_language() or DEFAULT_LANGUAGE
    g.language = language
    return language


def remember_language(language: str) -> None:
    """Make `language` this session's choice, from this request on."""
    session["lang"] = language
    g.language = language
    # Flask-Babel keeps the locale it chose for the rest of the request.
    refresh()


def _learner_language() -> str | None:
    """Return the signed-in learner's language setting, if anyone is signed in."""
    try:
        if not current_user.is_authenticated:
            return None
        # Signing in opened the request's read phase (see db.begin_reading).
        language = load_settings(begin_reading(), current_user.user).language
    except SQLAlchemyError:
        # The database is failing (this may be its error page being drawn):
        # the header and the default still choose a language.
        return None
    return language if language in SUPPORTED else None


def _accepted_language() -> str | None:
    """Return the language the Accept-Language header prefers, if it is ours."""
    best = request.accept_languages.best_match(tuple(_ACCEPTED))
    return _ACCEPTED.get(best) if best else None


def select_locale() -> str:
    """Flask-Babel's locale selector."""
    return SUPPORTED[current_language()]


def localized(text: dict[str, str] | str) -> str:
    """Pick the current language out of a {"zh-CN": ..., "en": ...} mapping."""
    return pick(text, current_language())


def _choose_language() -> None:
    # Chosen before the view runs: the learner's setting is read in the
    # request's read phase, never from inside a view's write transaction.
    if request.endpoint != "static":
        current_language()


def init_app(app: Flask) -> None:
    """Bind Flask-Babel and expose the language helpers to templates."""
    app.config.setdefault("BABEL_DEFAULT_LOCALE", "zh_Hans_CN")
    babel.init_app(app, locale_selector=select_locale)
    app.before_request(_choose_language)
    app.jinja_env.globals.update(current_language=current_language, localized=localized)
