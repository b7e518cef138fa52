"""Helpers for tests of the pages and the API: learners, sign-in, open items."""

from __future__ import annotations

import gettext
import re
from functools import cache
from pathlib import Path

from quizsvc.db import get_session
from quizsvc.models import User
from quizsvc.services.accounts import register
from quizsvc.services.reviews import open_item

PASSWORD = "correct horse battery"
CATALOG = (
    Path(__file__).resolve().parents[1]
    / "quizsvc/translations/zh_Hans_CN/LC_MESSAGES/messages.mo"
)


@cache
def _chinese_catalog() -> gettext.GNUTranslations:
    with open(CATALOG, "rb") as handle:
        return gettext.GNUTranslations(handle)


def in_chinese(error) -> str:
    """A quizsvc error (or Message) as a zh-CN page or API response shows it."""
    return error.render(_chinese_catalog().gettext, "zh-CN")


def make_learner(app, username: str) -> int:
    """Create a learner with the shared test password and return the id."""
    with app.app_context():
        session = get_session()
        user = register(session, username, PASSWORD)
        session.commit()
        return user.id


def sign_in(client, username: str) -> None:
    """Log in through the JSON API (sets the session cookie)."""
    response = client.post(
        "/api/v1/auth/login", json={"username": username, "password": PASSWORD}
    )
    assert response.status_code == 200, response.json


def open_for(app, user_id: int, item_id: str, **problem) -> None:
    """Open an item in a learner's drill, as GET /drill would."""
    with app.app_context():
        session = get_session()
        open_item(session, session.get(User, user_id), item_id, **problem)
        session.commit()


def csrf_token(html: str) -> str:
    """The CSRF token embedded in a page."""
    return re.search(
        r'name="csrf_token" (?:type="hidden" )?value="([^"]+)"', html
    ).group(1)
