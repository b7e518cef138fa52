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
from tests.learnerutil import sync_real_bank

# Budgets per request; the issue measured 10 for drill/next with an item open
# and 18 for drill/answer before the request path was slimmed.
NEXT_OPENING_BUDGET = 0
NEXT_ALREADY_OPEN_BUDGET = 0
ANSWER_BUDGET = 0
REPLAY_BUDGET = 0


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


def _answer_body(item: dict) -> dict:
    if item["type"] == "recall":
        return {"item_id": item["item_id"], "rating": "good"}
    if item["type"] == "generated":
        return {"item_id": item["item_id"], "answer": {"S": "[[0, 0]]"}}
    if item["type"] == "ordering":
        return {"item_id": item["item_id"], "answer": ["x"]}
    return {"item_id": item["item_id"], "answer": "a"}


def test_statements_per_drill_request(app, learner_client):
    with counted(app) as opening:
        first = learner_client.get("/api/v1/drill/next")
    assert first.status_code == 200, first.json
    with counted(app) as again:
        assert learner_client.get("/api/v1/drill/next").status_code == 200
    body = {**_answer_body(first.json), "idempotency_key": "k-1", "duration_ms": 5}
    with counted(app) as answering:
        answered = learner_client.post("/api/v1/drill/answer", json=body)
    assert answered.status_code == 201, answered.json
    with counted(app) as replaying:
        assert learner_client.post("/api/v1/drill/answer", json=body).status_code == 200
    print(
        f"\nnext (opening) {len(opening)}, next (already open) {len(again)}, "
        f"answer {len(answering)}, replay {len(replaying)}"
    )
    for name, statements in [("opening", opening), ("again", again),
                             ("answer", answering), ("replay", replaying)]:
        print(f"--- {name}")
        for s in statements:
            print("   ", " ".join(s.split())[:150])
