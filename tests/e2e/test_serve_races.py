"""Real races against real servers: one learner on two devices loses nothing.

Each test starts `quizsvc serve` with several gunicorn workers (a subprocess on
a free port) and sends requests from threads released together by a barrier,
so two workers really handle one learner's requests at the same moment. What
the learner relies on: every answer acknowledged with 201 is stored exactly
once, an open item takes one answer, a retry with the same idempotency key gets
the first result, and nothing answers 5xx.
"""

from __future__ import annotations

import os
import random
import secrets
import threading
import uuid
from contextlib import ExitStack, contextmanager
from functools import partial
from pathlib import Path

import httpx
import pytest
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from bench.load import answer_for, provision, served
from quizsvc.db import make_engine
from quizsvc.models import Explanation, Review
from tests.fixtures.databases import BACKENDS, postgres_schema
from tests.fixtures.serving import SECRET_KEY, serve_command

pytestmark = pytest.mark.slow

ROUNDS = 10


@contextmanager
def database_for(backend: str, folder: Path):
    """A database URL for the servers under test (PostgreSQL: a private schema)."""
    if backend == "sqlite":
        yield f"sqlite:///{folder / 'shared.sqlite3'}"
        return
    with postgres_schema() as url:
        yield url


@contextmanager
def quizsvc_instance(folder: Path, url: str, workers: int, **settings: str):
    """Run `quizsvc serve` on the database; yield its base URL."""
    folder.mkdir(parents=True, exist_ok=True)
    env = {
        **os.environ,
        "QUIZSVC_INSTANCE_PATH": str(folder),
        "QUIZSVC_DATABASE_URL": url,
        "QUIZSVC_SECRET_KEY": SECRET_KEY,
        "PYTHONUNBUFFERED": "1",
        **{f"QUIZSVC_{name}": value for name, value in settings.items()},
    }
    with served(serve_command(workers), env, folder / "serve.log") as base:
        yield base


def together(*calls):
    """Run the calls in threads released at once; return their results in order."""
    barrier = threading.Barrier(len(calls))
    results: list = [None] * len(calls)

    def run(index, call):
        barrier.wait()
        try:
            results[index] = call()
        except BaseException as exc:  # reported by the caller's assertions
            results[index] = exc

    threads = [threading.Thread(target=run, args=pair) for pair in enumerate(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    for result in results:
        if isinstance(result, BaseException):
            raise result
    return results


def no_server_errors(responses) -> None:
    bad = [(r.request.url.path, r.status_code, r.text[:200]) for r in responses]
    assert all(status < 500 for _, status, _ in bad), bad


class Device:
    """One of the learner's devices: its own connection to one server."""

    def __init__(self, base: str, token: str):
        self.client = httpx.Client(
            base_url=base + "api/v1",
            headers={"Authorization": f"Bearer {token}"},
            timeout=60,
        )

    def close(self) -> None:
        self.client.close()

    def next(self):
        return self.client.get("/drill/next")

    def answer(self, body: dict, key: str):
        return self.client.post("/drill/answer", json={**body, "idempotency_key": key})

    def explain(self, review_id: int):
        return self.client.post(
            "/drill/explanation",
            json={"review_id": review_id, "text": "I mixed up rows and columns."},
        )


def race_one_learner(phone: Device, laptop: Device, rounds: int, seed: int):
    """Both devices ask for the item, answer it twice each, explain it together.

    Returns the ids of the reviews acknowledged with 201 and how many of them
    were wrong answers that asked for an explanation.
    """
    rng = random.Random(seed)
    acknowledged: list[int] = []
    explained = 0
    for _ in range(rounds):
        steps = together(phone.next, laptop.next)
        no_server_errors(steps)
        assert [s.status_code for s in steps] == [200, 200], [s.text for s in steps]
        assert steps[0].json() == steps[1].json()  # one item open, not two
        item = steps[0].json()
        if item.get("done"):
            break
        body = answer_for(item, right=rng.random() < 0.6)
        keys = {"phone": uuid.uuid4().hex, "laptop": uuid.uuid4().hex}
        # Each device sends its answer and, at the same moment, a retry of it.
        sent = ["phone", "phone", "laptop", "laptop"]
        devices = [phone, phone, laptop, laptop]
        answers = together(
            *[
                partial(device.answer, body, keys[name])
                for device, name in zip(devices, sent, strict=True)
            ]
        )
        no_server_errors(answers)
        created = [r for r in answers if r.status_code == 201]
        assert len(created) == 1, [(r.status_code, r.text[:200]) for r in answers]
        winner = sent[answers.index(created[0])]
        for name, response in zip(sent, answers, strict=True):
            if name == winner:
                # The original and its retry: one stored review, one result.
                assert response.status_code in (200, 201), response.text
                assert response.json()["review_id"] == created[0].json()["review_id"]
            else:
                # The other device answered an item that was no longer open.
                assert response.status_code == 409, response.text
                assert response.json()["error"] == "conflict"
        review_id = created[0].json()["review_id"]
        acknowledged.append(review_id)
        if created[0].json()["requires_explanation"]:
            explanations = together(
                partial(phone.explain, review_id), partial(laptop.explain, review_id)
            )
            no_server_errors(explanations)
            assert [r.status_code for r in explanations] == [201, 201]
            ids = {r.json()["explanation_id"] for r in explanations}
            assert len(ids) == 1
            explained += 1
    return acknowledged, explained


def stored(url: str) -> tuple[list[int], int]:
    engine = make_engine(url)
    try:
        with Session(engine) as session:
            reviews = list(session.scalars(select(Review.id).order_by(Review.id)))
            explanations = session.scalar(select(func.count()).select_from(Explanation))
    finally:
        engine.dispose()
    return reviews, explanations


@pytest.mark.parametrize("backend", BACKENDS)
def test_two_devices_racing_on_a_multi_worker_server_lose_and_double_nothing(
    backend, tmp_path
):
    """Phone and laptop answer the same items at once on `serve --workers 3`."""
    with database_for(backend, tmp_path) as url:
        with quizsvc_instance(tmp_path / "instance", url, workers=3) as base:
            token = provision(url, 1)[0]
            phone, laptop = Device(base, token), Device(base, token)
            try:
                acknowledged, explained = race_one_learner(
                    phone, laptop, ROUNDS, seed=1
                )
            finally:
                phone.close()
                laptop.close()
        reviews, explanations = stored(url)
    assert len(acknowledged) == ROUNDS
    assert reviews == sorted(acknowledged)  # stored = acknowledged, once each
    assert explanations == explained


@pytest.mark.postgres
def test_two_instances_share_one_database_and_redis(tmp_path):
    """Do two `quizsvc serve` on one PostgreSQL and Redis act as one service?"""
    redis_url = os.environ.get("QUIZSVC_TEST_REDIS_URL")
    if not redis_url:
        pytest.skip(
            "QUIZSVC_TEST_REDIS_URL is not set (e.g. redis://127.0.0.1:6379/0); "
            ".ci/run sets it when Redis answers"
        )
    settings = {
        "RATELIMIT_STORAGE_URI": redis_url,
        # A fresh prefix keeps this run's login counters apart from others'.
        "RATELIMIT_KEY_PREFIX": f"scale-out-{secrets.token_hex(4)}",
        "LOGIN_RATE_LIMIT": "6 per minute",
    }
    with database_for("postgresql", tmp_path) as url, ExitStack() as stack:
        first, second = (
            stack.enter_context(
                quizsvc_instance(tmp_path / name, url, workers=2, **settings)
            )
            for name in ("first", "second")
        )
        # A session made on one instance is valid on the other (one secret key).
        browser = stack.enter_context(httpx.Client(timeout=60))
        password = "correct horse battery staple"
        created = browser.post(
            first + "api/v1/auth/register",
            json={"username": "ana", "password": password},
        )
        assert created.status_code == 201, created.text
        assert browser.get(second + "api/v1/drill/next").status_code == 200
        assert browser.post(second + "api/v1/auth/logout").status_code == 200
        assert browser.get(first + "api/v1/drill/next").status_code == 401

        # Learners on two devices, one on each instance, racing as above.
        tokens = provision(url, 2)
        pairs = [(Device(first, t), Device(second, t)) for t in tokens]
        try:
            results = together(
                *[
                    partial(race_one_learner, phone, laptop, ROUNDS // 2, seed=n)
                    for n, (phone, laptop) in enumerate(pairs)
                ]
            )
        finally:
            for device in (d for pair in pairs for d in pair):
                device.close()
        acknowledged = sorted(i for ids, _ in results for i in ids)
        reviews, explanations = stored(url)
        assert reviews == acknowledged
        assert explanations == sum(count for _, count in results)

        # One login limit for the whole deployment: failures on either instance
        # count against the same six per minute.
        statuses = [
            httpx.post(
                base + "api/v1/auth/login",
                json={"username": "ana", "password": "wrong password"},
                timeout=60,
            ).status_code
            for base in [first, second] * 4
        ]
        assert statuses == [401] * 6 + [429] * 2
