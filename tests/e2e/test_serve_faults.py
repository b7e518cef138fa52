"""A database that hangs, stops or runs out of disk: 503 in seconds, nothing lost.

Each test serves the app (`quizsvc serve`, 2 workers) on a database of its
own (a private PostgreSQL cluster, or SQLite on a small tmpfs), breaks the
database while a learner works, and checks what the learner relies on:

- a request that needs the database fails within the bound (5 s) with a 503,
  `Retry-After`, and a message in the learner's language (zh-CN by default),
  never a hang, a 500 or a traceback in the log;
- requests that need no database (/healthz, generating a problem) are served
  meanwhile, and /readyz says what is wrong within a second;
- an answer that got a 503 stored nothing, and its retry with the same
  idempotency key succeeds once the database is back, exactly once;
- the service recovers by itself, without a restart.
"""

from __future__ import annotations

import re
import sqlite3
import time
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from bench.load import Seeds, answer_for, provision_learners, served
from tests.fixtures.faults import fill, private_postgres, small_disk
from tests.fixtures.serving import SECRET_KEY, serve_command

pytestmark = pytest.mark.slow

BOUND = 5.0  # seconds a request may take to fail on a broken dependency
CJK = re.compile("[\u4e00-\u9fff]")


class Learner:
    """A learner on the API with a token, answering the item the drill opens."""

    def __init__(self, base: str, database_url: str):
        (token, self.user_id), *_ = provision_learners(database_url, 1)
        self.seeds = Seeds(database_url)
        self.client = httpx.Client(
            base_url=base + "api/v1",
            headers={"Authorization": f"Bearer {token}"},
            # Past the bound, short of a frozen database's whole outage.
            timeout=15,
        )

    def __enter__(self) -> Learner:
        return self

    def __exit__(self, *_exc) -> None:
        self.client.close()
        self.seeds.engine.dispose()

    def timed(self, method: str, path: str, **kwargs):
        started = time.monotonic()
        response = self.client.request(method, path, **kwargs)
        return response, time.monotonic() - started

    def answer_body(self) -> dict:
        item = self.client.get("/drill/next").json()
        return answer_for(item, True, lambda: self.seeds(self.user_id))


@pytest.fixture
def learner_on():
    """Make learners on a served app; their connections are closed after the test."""
    made: list[Learner] = []

    def make(base: str, database_url: str) -> Learner:
        made.append(Learner(base, database_url))
        return made[-1]

    yield make
    for learner in made:
        learner.__exit__()


def assert_unavailable(
    response: httpx.Response, took: float, language: str = "zh-CN"
) -> None:
    """A 503 the client can act on: soon, with Retry-After, in its language, an id.

    The language is the learner's setting when the database could still be
    read (the bench's learners chose English), else zh-CN, the default.
    """
    assert took < BOUND, took
    assert response.status_code == 503, (response.status_code, response.text)
    assert int(response.headers["Retry-After"]) > 0
    assert response.headers["X-Request-ID"]
    body = response.json()
    assert set(body) >= {"error", "message", "request_id"}, body
    assert bool(CJK.search(body["message"])) == (language == "zh-CN"), body


def assert_db_free_requests_served(base: str) -> None:
    started = time.monotonic()
    health = httpx.get(base + "healthz", timeout=BOUND)
    problem = httpx.post(
        base + "api/v1/problems", json={"kind": "scores"}, timeout=BOUND
    )
    assert health.status_code == 200
    assert problem.status_code == 201, problem.text
    assert time.monotonic() - started < 2


def assert_log_has_no_traceback(log: Path) -> None:
    text = log.read_text()
    assert "Traceback" not in text
    # One line per refused request naming the dependency and the request id.
    assert re.search(r'"status": 503', text)


def reviews_with_key(database_url: str, key: str) -> int:
    from sqlalchemy import text
    from sqlalchemy.pool import NullPool

    from quizsvc.db import make_engine

    engine = make_engine(database_url, poolclass=NullPool)
    try:
        with engine.connect() as connection:
            return connection.execute(
                text("SELECT count(*) FROM reviews WHERE idempotency_key = :key"),
                {"key": key},
            ).scalar_one()
    finally:
        engine.dispose()


@contextmanager
def quizsvc_serving(instance: Path, url: str, log: Path, **settings: str):
    """`quizsvc serve --workers 2` on the database; its log kept off its disk."""
    import os

    instance.mkdir(parents=True, exist_ok=True)
    env = {
        **os.environ,
        "QUIZSVC_INSTANCE_PATH": str(instance),
        "QUIZSVC_DATABASE_URL": url,
        "QUIZSVC_SECRET_KEY": SECRET_KEY,
        "PYTHONUNBUFFERED": "1",
        **{f"QUIZSVC_{name}": value for name, value in settings.items()},
    }
    with served(serve_command(2), env, log) as base:
        yield base


@contextmanager
def served_on_private_postgres(tmp_path: Path):
    with private_postgres() as cluster:
        log = tmp_path / "serve.log"
        with quizsvc_serving(tmp_path / "instance", cluster.url, log) as base:
            yield base, cluster, log


def test_a_frozen_postgresql_is_a_503_within_seconds_and_nothing_is_lost(
    tmp_path, learner_on
):
    with served_on_private_postgres(tmp_path) as (base, cluster, log):
        learner = learner_on(base, cluster.url)
        body = learner.answer_body()
        cluster.freeze()
        try:
            for _ in range(3):
                response, took = learner.timed("GET", "/drill/next")
                assert_unavailable(response, took)
            response, took = learner.timed(
                "POST", "/drill/answer", json={**body, "idempotency_key": "frozen-1"}
            )
            assert_unavailable(response, took)
            assert_db_free_requests_served(base)
            started = time.monotonic()
            ready = httpx.get(base + "readyz", timeout=BOUND)
            assert time.monotonic() - started < 1.5
            assert ready.status_code == 503
            assert ready.json()["checks"]["database"]["status"] in ("timeout", "error")
        finally:
            cluster.thaw()
        deadline = time.monotonic() + 10
        while True:
            retry = learner.client.post(
                "/drill/answer", json={**body, "idempotency_key": "frozen-1"}
            )
            if retry.status_code == 201 or time.monotonic() > deadline:
                break
            time.sleep(0.25)
        assert retry.status_code == 201, retry.text
        assert reviews_with_key(cluster.url, "frozen-1") == 1
        assert_log_has_no_traceback(log)


def test_a_stopped_postgresql_is_a_503_and_signed_in_pages_render(tmp_path, learner_on):
    with served_on_private_postgres(tmp_path) as (base, cluster, log):
        learner = learner_on(base, cluster.url)
        with httpx.Client(base_url=base, timeout=30) as browser:
            page = browser.get("register").text
            token = re.search(r'name="csrf_token"[^>]*value="([^"]+)"', page)[1]
            browser.post(
                "register",
                data={
                    "username": "xiaoming",
                    "password": "correct horse battery staple",
                    "confirm": "correct horse battery staple",
                    "csrf_token": token,
                },
            )
            cluster.stop()
            try:
                response, took = learner.timed("GET", "/drill/next")
                assert_unavailable(response, took)
                started = time.monotonic()
                page = browser.get("drill")
                assert time.monotonic() - started < BOUND
                # The app's own page, localized, with its headers and an id.
                assert page.status_code == 503
                assert "<html" in page.text and CJK.search(page.text)
                assert page.headers["X-Request-ID"] in page.text
                assert "Content-Security-Policy" in page.headers
                assert int(page.headers["Retry-After"]) > 0
            finally:
                cluster.start()
        deadline = time.monotonic() + 10
        while learner.client.get("/drill/next").status_code != 200:
            assert time.monotonic() < deadline, "no recovery without a restart"
            time.sleep(0.25)
        assert_log_has_no_traceback(log)


def test_sqlite_write_lock_held_too_long_is_a_503_within_seconds(tmp_path, learner_on):
    url = f"sqlite:///{tmp_path / 'quizsvc.sqlite3'}"
    log = tmp_path / "serve.log"
    with quizsvc_serving(tmp_path / "instance", url, log) as base:
        learner = learner_on(base, url)
        body = learner.answer_body()
        holder = sqlite3.connect(tmp_path / "quizsvc.sqlite3", isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")
        try:
            response, took = learner.timed(
                "POST", "/drill/answer", json={**body, "idempotency_key": "locked-1"}
            )
            # Read before the write waited for the lock: the learner's English.
            assert_unavailable(response, took, "en")
            assert_db_free_requests_served(base)
        finally:
            holder.execute("ROLLBACK")
            holder.close()
        retry = learner.client.post(
            "/drill/answer", json={**body, "idempotency_key": "locked-1"}
        )
        assert retry.status_code == 201, retry.text
        assert reviews_with_key(url, "locked-1") == 1


def test_a_full_disk_is_a_503_nothing_half_written_and_recovers(tmp_path, learner_on):
    instance = tmp_path / "instance"
    with small_disk(instance, 20 * 1024):
        url = f"sqlite:///{instance / 'quizsvc.sqlite3'}"
        log = tmp_path / "serve.log"
        with quizsvc_serving(instance, url, log, READYZ_MIN_FREE_MB="1") as base:
            learner = learner_on(base, url)
            body = learner.answer_body()
            filler = fill(instance)
            response, took = learner.timed(
                "POST", "/drill/answer", json={**body, "idempotency_key": "full-1"}
            )
            assert_unavailable(response, took, "en")
            ready = httpx.get(base + "readyz", timeout=BOUND)
            assert ready.status_code == 503
            assert "free" in ready.json()["checks"]["database"]["message"]
            filler.unlink()
            retry = learner.client.post(
                "/drill/answer", json={**body, "idempotency_key": "full-1"}
            )
            assert retry.status_code == 201, retry.text
            assert reviews_with_key(url, "full-1") == 1
            with sqlite3.connect(instance / "quizsvc.sqlite3") as check:
                assert check.execute("PRAGMA integrity_check").fetchone() == ("ok",)
            assert httpx.get(base + "readyz", timeout=BOUND).status_code == 200
