"""Redis (the rate-limit counters) down or hung: learners still sign in.

Each test serves the app with its counters in a private redis-server, signs a
learner in, then stops or freezes Redis and signs in again on the web form and
the API. With the in-memory fallback (the default) every sign-in works, a hung
Redis delays only the first one per worker by RATELIMIT_STORAGE_TIMEOUT, the
log and /readyz say the counters are per worker, and when Redis is back the
server uses it again without a restart.
"""

from __future__ import annotations

import re
import time

import httpx
import pytest

from tests.fixtures.faults import private_redis
from tests.fixtures.serving import start_server, stop_server

pytestmark = pytest.mark.slow

PASSWORD = "correct horse battery staple"


def register(base: str, username: str) -> None:
    response = httpx.post(
        base + "api/v1/auth/register",
        json={"username": username, "password": PASSWORD},
        timeout=30,
    )
    assert response.status_code == 201, response.text


def api_sign_in(base: str, username: str) -> tuple[int, float]:
    started = time.monotonic()
    response = httpx.post(
        base + "api/v1/auth/login",
        json={"username": username, "password": PASSWORD},
        timeout=30,
    )
    return response.status_code, time.monotonic() - started


def form_sign_in(base: str, username: str) -> int:
    with httpx.Client(base_url=base, timeout=30) as browser:
        page = browser.get("login").text
        token = re.search(r'name="csrf_token"[^>]*value="([^"]+)"', page)[1]
        response = browser.post(
            "login",
            data={"username": username, "password": PASSWORD, "csrf_token": token},
        )
        # Signed in: sent on to the learner's page.
        return response.status_code if response.status_code != 302 else 200


def readyz(base: str) -> tuple[int, dict]:
    response = httpx.get(base + "readyz", timeout=5)
    return response.status_code, response.json()


@pytest.fixture
def served_with_redis(tmp_path, monkeypatch):
    with private_redis(tmp_path / "redis") as redis:
        monkeypatch.setenv("QUIZSVC_RATELIMIT_STORAGE_URI", redis.url)
        process, base = start_server(tmp_path, "--workers", "2")
        try:
            yield base, redis, tmp_path / "serve.log"
        finally:
            stop_server(process)


def test_sign_in_works_while_redis_is_stopped_and_after_it_returns(served_with_redis):
    base, redis, log = served_with_redis
    register(base, "xiaoming")
    assert api_sign_in(base, "xiaoming")[0] == 200
    assert readyz(base)[1]["checks"]["rate_limits"]["status"] == "ok"

    redis.stop()
    for _ in range(4):  # both workers, each more than once
        status, took = api_sign_in(base, "xiaoming")
        assert status == 200
        assert took < 5
    assert form_sign_in(base, "xiaoming") == 200
    register(base, "xiaohong")
    status, body = readyz(base)
    assert status == 200, body
    assert body["status"] == "degraded"
    assert body["checks"]["rate_limits"]["status"] == "fallback"
    assert "falling back to in-memory storage" in log.read_text()
    assert "Traceback" not in log.read_text()

    redis.start()
    assert readyz(base)[1]["checks"]["rate_limits"]["status"] == "ok"
    assert api_sign_in(base, "xiaohong")[0] == 200


def test_a_hung_redis_delays_a_sign_in_by_the_storage_timeout_only(
    tmp_path, monkeypatch
):
    # 2 s: a sign-in that waited for redis-py's own retries (3 more tries,
    # with pauses) would take 16 s and more.
    monkeypatch.setenv("QUIZSVC_RATELIMIT_STORAGE_TIMEOUT", "2")
    with private_redis(tmp_path / "redis") as redis:
        monkeypatch.setenv("QUIZSVC_RATELIMIT_STORAGE_URI", redis.url)
        process, base = start_server(tmp_path, "--workers", "2")
        try:
            took = sign_in_while_frozen(base, redis)
        finally:
            stop_server(process)
    # A worker's first sign-in waits out the timeout twice (the count that
    # failed, then Flask-Limiter asks once whether Redis is back); later ones
    # at most once, when it asks again (after 1, 2, 4 ... s). Never longer.
    assert max(took) < 2 * 2 + 4, took


def sign_in_while_frozen(base: str, redis) -> list[float]:
    register(base, "xiaoming")
    redis.freeze()
    try:
        took = []
        for _ in range(6):
            status, seconds = api_sign_in(base, "xiaoming")
            assert status == 200
            took.append(seconds)
        started = time.monotonic()
        status, body = readyz(base)
        assert time.monotonic() - started < 1.5
        assert status == 200, body
        assert body["checks"]["rate_limits"]["status"] == "fallback"
    finally:
        redis.thaw()
    return took


def test_fail_closed_refuses_sign_in_while_redis_is_down(tmp_path, monkeypatch):
    monkeypatch.setenv("QUIZSVC_RATELIMIT_IN_MEMORY_FALLBACK_ENABLED", "false")
    with private_redis(tmp_path / "redis") as redis:
        monkeypatch.setenv("QUIZSVC_RATELIMIT_STORAGE_URI", redis.url)
        process, base = start_server(tmp_path, "--workers", "1")
        try:
            register(base, "xiaoming")
            redis.stop()
            response = httpx.post(
                base + "api/v1/auth/login",
                json={"username": "xiaoming", "password": PASSWORD},
                timeout=30,
            )
            # Unavailable for now, not a bug: 503, when to retry, in zh-CN.
            assert response.status_code == 503, response.text
            assert int(response.headers["Retry-After"]) > 0
            assert response.json()["message"] == "登录暂时不可用，请过几秒再试。"
            assert response.elapsed.total_seconds() < 5
            status, body = readyz(base)
            assert status == 503
            assert body["checks"]["rate_limits"]["status"] == "error"
        finally:
            stop_server(process)
