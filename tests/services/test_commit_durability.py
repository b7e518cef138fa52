"""Which transactions wait for the disk: answers always, opening an item need not.

A listener on the engine's `commit` event asks the database, inside the
transaction about to commit, how that commit will be flushed: SQLite's
`PRAGMA synchronous` (1 = NORMAL, 2 = FULL), PostgreSQL's `synchronous_commit`.
"""

from __future__ import annotations

from contextlib import contextmanager

import pytest
from sqlalchemy import event

from quizsvc.db import READ_ONLY_OPTION, get_engine, make_engine
from tests.factories import answer_body, sync_real_bank


@pytest.fixture
def app(db_app):
    sync_real_bank(db_app)
    return db_app


@contextmanager
def commit_levels(app):
    """Collect, per commit of the app's engine, whether it waits for the disk."""
    levels: list[bool] = []

    def note(connection):
        if connection.get_execution_options().get(READ_ONLY_OPTION):
            return  # a read phase's commit writes nothing
        if connection.dialect.name == "sqlite":
            level = connection.exec_driver_sql("PRAGMA synchronous").scalar()
            levels.append(level >= 2)
        else:
            level = connection.exec_driver_sql("SHOW synchronous_commit").scalar()
            levels.append(level != "off")

    engine = get_engine(app)
    event.listen(engine, "commit", note)
    try:
        yield levels
    finally:
        event.remove(engine, "commit", note)


def test_opening_an_item_need_not_wait_for_the_disk_but_an_answer_does(
    app, learner_client
):
    """Does drill/next commit without a flush, and every answer with one?

    A right answer that carries the next item opened it in its own durable
    commit; drill/next then shows it and commits nothing.
    """
    carried = None
    for _ in range(3):
        with commit_levels(app) as opening:
            item = learner_client.get("/api/v1/drill/next")
        assert item.status_code == 200, item.json
        assert opening == ([] if carried else [False])
        assert carried in (None, item.json)
        body = {**answer_body(item.json), "idempotency_key": item.json["item_id"]}
        with commit_levels(app) as answering:
            answered = learner_client.post("/api/v1/drill/answer", json=body)
        assert answered.status_code == 201, answered.json
        assert answering == [True]
        carried = answered.json["next"]
        if answered.json["requires_explanation"]:
            with commit_levels(app) as explaining:
                explained = learner_client.post(
                    "/api/v1/drill/explanation",
                    json={
                        "review_id": answered.json["review_id"],
                        "text": "I mixed up rows and columns.",
                    },
                )
            assert explained.status_code == 201, explained.json
            assert explaining == [True]


def test_the_drill_page_opens_items_without_a_flush_and_settings_keep_one(
    app, learner_client
):
    """Does only the marked view relax the commit, other writes keep theirs?"""
    with commit_levels(app) as opening:
        assert learner_client.get("/drill").status_code == 200
    assert opening == [False]
    with commit_levels(app) as saving:
        changed = learner_client.patch("/api/v1/settings", json={"new_per_day": 7})
    assert changed.status_code == 200, changed.json
    assert saving == [True]


def test_a_relaxed_sqlite_level_never_raises_a_lower_configured_one(tmp_path):
    """Does a server configured with synchronous=OFF stay OFF when relaxing?"""
    from sqlalchemy import text

    from quizsvc.db import NO_FLUSH_OPTION

    url = f"sqlite:///{tmp_path / 'x.sqlite3'}"
    engine = make_engine(url, sqlite_synchronous="OFF")
    relaxed = engine.connect().execution_options(**{NO_FLUSH_OPTION: True})
    with relaxed as connection, connection.begin():
        assert connection.execute(text("PRAGMA synchronous")).scalar() == 0
    engine.dispose()
