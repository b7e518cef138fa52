"""How many SQL statements one drill request runs: a budget that keeps the path lean.

The count is taken with SQLAlchemy's `before_cursor_execute` event on the app's
engine, around one request of the JSON API; signing in (the session cookie and
the user row) is part of it, as it is for every real request.
"""

from __future__ import annotations

import secrets
from contextlib import contextmanager
from datetime import UTC, datetime

import pytest
from sqlalchemy import event

from quizsvc.db import get_engine, get_session
from quizsvc.models import BankVersion
from quizsvc.services.bank_cache import bank_snapshot
from tests.factories import answer_body, sync_real_bank

# Statements per request, the sign-in's included (SQLite counts its BEGIN
# DEFERRED and BEGIN IMMEDIATE, PostgreSQL the learner's advisory lock), once
# the worker has its copy of the bank (quizsvc.services.bank_cache: one version
# read instead of the lessons and items). Before the answer path was slimmed:
# next 18 (opening) / 13 (already open), answer 22, replay 6. Opening an item
# reads its plan before taking SQLite's write lock (two more statements in
# all, nine fewer under the lock); signing in reads before the lock too (one
# more statement: its BEGIN DEFERRED; so does a replay, which never takes the
# lock). On SQLite, a request whose transaction needs another `synchronous`
# level than its connection's last one counts that PRAGMA too (drill/next
# commits without a flush, an answer with one; see
# quizsvc.db.commits_without_flush).
T0 = datetime(2026, 12, 1, tzinfo=UTC)
NEXT_OPENING_BUDGET = 15
# On SQLite: the statements that run while the write lock is held.
NEXT_OPENING_LOCKED_BUDGET = 4
NEXT_ALREADY_OPEN_BUDGET = 5
ANSWER_BUDGET = 14
ANSWER_LOCKED_BUDGET = 10
REPLAY_BUDGET = 7
# A right answer that opens the next item in its own transaction (the `next`
# of its body): less than ANSWER_BUDGET + NEXT_OPENING_BUDGET, one commit.
ANSWER_WITH_NEXT_BUDGET = 20


@pytest.fixture
def app(db_app):
    sync_real_bank(db_app)
    # A running worker reads the bank's lessons and items once (its first
    # request) and then only checks their version: counted here is the rest.
    # (The shared PostgreSQL test schema is emptied between tests, the bank's
    # version row too: put one back.)
    with db_app.app_context():
        session = get_session()
        session.merge(BankVersion(id=1, token=secrets.randbits(62), changed_at=T0))
        session.commit()
        bank_snapshot(session)
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


def test_a_right_answer_opens_the_next_item_within_its_budget(app, learner_client):
    """Does an answer that carries the next item run fewer statements than an
    answer and a drill/next apart, look its key up once, and leave drill/next
    nothing to write?"""
    first = learner_client.get("/api/v1/drill/next").json
    assert first["type"] == "choice", first
    body = {"item_id": first["item_id"], "answer": "c", "idempotency_key": "r-1"}
    with counted(app) as answering:
        answered = learner_client.post("/api/v1/drill/answer", json=body)
    assert answered.status_code == 201 and answered.json["next"]["item_id"]
    with counted(app) as showing:
        shown = learner_client.get("/api/v1/drill/next")
    assert shown.json == answered.json["next"]
    assert len(answering) <= ANSWER_WITH_NEXT_BUDGET, answering
    lookups = [s for s in answering if "idempotency_key =" in s]
    assert len(lookups) == 1, lookups
    assert len(showing) <= NEXT_ALREADY_OPEN_BUDGET, showing
    assert "BEGIN IMMEDIATE" not in showing, showing
