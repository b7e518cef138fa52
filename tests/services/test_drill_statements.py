"""How many SQL statements one drill request runs: a budget that keeps the path lean.

The count is taken with SQLAlchemy's `before_cursor_execute` event on the app's
engine, around one request of the JSON API; signing in (the session cookie and
the user row) is part of it, as it is for every real request.
"""

from __future__ import annotations

from contextlib import contextmanager

import pytest
from sqlalchemy import event

from quizsvc.db import get_engine
from tests.factories import answer_body, sync_real_bank

# Statements per request, the sign-in's included (SQLite counts its BEGIN
# DEFERRED and BEGIN IMMEDIATE, PostgreSQL the learner's advisory lock). Before
# the answer path was slimmed: next 18 (opening) / 13 (already open), answer
# 22, replay 6. Opening an item reads its plan before taking SQLite's write
# lock (two more statements in all, nine fewer under the lock); signing in
# reads before the lock too (one more statement: its BEGIN DEFERRED; so
# does a replay, which never takes the lock). On
# SQLite, a request whose transaction needs another `synchronous` level than
# its connection's last one counts that PRAGMA too (drill/next commits without
# a flush, an answer with one; see quizsvc.db.commits_without_flush).
NEXT_OPENING_BUDGET = 16
# On SQLite: the statements that run while the write lock is held.
NEXT_OPENING_LOCKED_BUDGET = 4
NEXT_ALREADY_OPEN_BUDGET = 11
ANSWER_BUDGET = 14
ANSWER_LOCKED_BUDGET = 10
REPLAY_BUDGET = 7


@pytest.fixture
def app(db_app):
    sync_real_bank(db_app)
    return db_app


@contextmanager
def counted(app):
    """Collect the SQL statements the app's engine runs inside the block."""
    statements: list[str] = []

    def note(_conn, _cursor, statement, _params, _context, _many):
        statements.append(statement)

    engine = get_engine(app)
    event.listen(engine, "before_cursor_execute", note)
    try:
        yield statements
    finally:
        event.remove(engine, "before_cursor_execute", note)


def test_a_drill_cycle_stays_within_its_statement_budget(app, learner_client):
    """Do drill/next and drill/answer run no more SQL statements than budgeted?"""
    with counted(app) as opening:
        first = learner_client.get("/api/v1/drill/next")
    assert first.status_code == 200, first.json
    with counted(app) as again:
        assert learner_client.get("/api/v1/drill/next").json == first.json
    body = {**answer_body(first.json), "idempotency_key": "k-1", "duration_ms": 5}
    with counted(app) as answering:
        answered = learner_client.post("/api/v1/drill/answer", json=body)
    assert answered.status_code == 201, answered.json
    with counted(app) as replaying:
        assert learner_client.post("/api/v1/drill/answer", json=body).status_code == 200
    assert len(opening) <= NEXT_OPENING_BUDGET, opening
    assert len(again) <= NEXT_ALREADY_OPEN_BUDGET, again
    if "BEGIN IMMEDIATE" in opening:
        locked = opening[opening.index("BEGIN IMMEDIATE") :]
        assert len(locked) <= NEXT_OPENING_LOCKED_BUDGET, locked
        # Showing the item already open only reads: it never takes the lock.
        assert "BEGIN IMMEDIATE" not in again, again
    assert len(answering) <= ANSWER_BUDGET, answering
    if "BEGIN IMMEDIATE" in answering:
        locked = answering[answering.index("BEGIN IMMEDIATE") :]
        assert len(locked) <= ANSWER_LOCKED_BUDGET, locked
    assert len(replaying) <= REPLAY_BUDGET, replaying
    # One idempotency lookup per answer, and the new review is not read back.
    lookups = [s for s in answering if "idempotency_key =" in s]
    assert len(lookups) == 1, lookups
    assert not any(s.startswith("SELECT reviews.") for s in answering[-3:])
