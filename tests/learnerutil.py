"""Helpers for tests of the learner's pages and API: the bank, answers on record."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from functools import cache

from quizsvc import bank, catalog, scheduling
from quizsvc.db import get_session
from quizsvc.models import User
from quizsvc.services.bank_sync import sync_bank
from tests.factories import record_answer


@cache
def real_bank() -> bank.Bank:
    """The question bank in questions/, read once per test run."""
    return bank.load()


def sync_real_bank(app) -> None:
    """Load the real bank into the app's database; the app serves that bank."""
    with app.app_context():
        session = get_session()
        sync_bank(session, real_bank())
        session.commit()
    # The bank read once per run, rather than again by each test's app.
    if not app.config.get("QUESTIONS_PATH"):
        app.extensions.setdefault(catalog.EXTENSION_KEY, real_bank())


def graded_item(skill_id: str) -> str:
    """An auto-graded bank item whose only skill is `skill_id`."""
    return next(
        q.id
        for q in real_bank().questions_for_skill(skill_id)
        if q.skills == (skill_id,) and q.type in ("choice", "numeric", "cloze")
    )


def generated_question() -> bank.Question:
    """The bank's first generated-problem item."""
    return next(q for q in real_bank().questions.values() if q.type == "generated")


def record(
    app, user_id: int, item_id: str, correct: bool, ago: timedelta, **extra
) -> None:
    """Store one auto-graded answer given `ago` before now."""
    with app.app_context():
        session = get_session()
        record_answer(
            session,
            session.get(User, user_id),
            item_id,
            graded=scheduling.GradedAnswer(correct=correct),
            now=datetime.now(UTC) - ago,
            **extra,
        )
        session.commit()
