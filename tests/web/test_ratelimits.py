"""Rate limits hold for the whole deployment, whatever the number of workers."""

from __future__ import annotations

import json
import os
import re
import time
import urllib.error
import urllib.request
import uuid

import pytest

from quizsvc.ratelimits import SQLiteStorage
from tests.fixtures.serving import start_server, stop_server

REDIS_URL = os.environ.get("QUIZSVC_TEST_REDIS_URL")


def post_json(url: str, body: dict) -> tuple[int, dict]:
    """POST a JSON body on a fresh connection; return the status and JSON."""
    request = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as error:
        return error.code, json.load(error)


def limited_after(url: str, path: str, attempts: int, body) -> list[int]:
    return [post_json(url + path, body(i))[0] for i in range(attempts)]


def check_limits_across_workers(url: str) -> None:
    logins = limited_after(
        url,
        "api/v1/auth/login",
        12,
        lambda i: {"username": "nobody", "password": "wrong password"},
    )
    assert logins == [401] * 10 + [429, 429]
    status, body = post_json(
        url + "api/v1/auth/login",
        {"username": "nobody", "password": "wrong password"},
    )
    assert status == 429 and body["error"] == "too_many_requests"
    # In the learner's language (zh-CN by default), not the limit in English.
    assert re.search("[\u4e00-\u9fff]", body["message"]), body
    assert "per" not in body["message"]
    registrations = limited_after(
        url,
        "api/v1/auth/register",
        21,
        lambda i: {"username": f"learner{i}", "password": "short"},
    )
    assert registrations == [400] * 20 + [429]


@pytest.mark.slow
def test_limits_hold_across_four_workers_with_the_default_storage(tmp_path):
    """Do four gunicorn workers count one login limit together, with no set-up?"""
    process, url = start_server(tmp_path, "--workers", "4")
    try:
        check_limits_across_workers(url)
    finally:
        stop_server(process)
    assert (tmp_path / "ratelimits.sqlite3").exists()


@pytest.mark.slow
@pytest.mark.skipif(not REDIS_URL, reason="QUIZSVC_TEST_REDIS_URL is not set")
def test_limits_hold_across_four_workers_with_redis(tmp_path, monkeypatch):
    monkeypatch.setenv("QUIZSVC_RATELIMIT_STORAGE_URI", REDIS_URL)
    # A prefix of its own keeps this run's counters apart from any other's.
    monkeypatch.setenv("QUIZSVC_RATELIMIT_KEY_PREFIX", f"test-{uuid.uuid4().hex}")
    process, url = start_server(tmp_path, "--workers", "4")
    try:
        check_limits_across_workers(url)
    finally:
        stop_server(process)
    assert not (tmp_path / "ratelimits.sqlite3").exists()


def test_two_processes_sharing_the_file_share_the_counters(tmp_path):
    uri = f"sqlite:///{tmp_path / 'counters.sqlite3'}"
    first, second = SQLiteStorage(uri), SQLiteStorage(uri)
    assert first.incr("login/1.2.3.4", 60) == 1
    assert second.incr("login/1.2.3.4", 60) == 2
    assert first.get("login/1.2.3.4") == 2
    assert second.get("other") == 0
    assert time.time() < first.get_expiry("login/1.2.3.4") <= time.time() + 60


def test_a_window_that_ended_starts_again_from_the_amount(tmp_path):
    storage = SQLiteStorage(f"sqlite:///{tmp_path / 'counters.sqlite3'}")
    storage.incr("key", 0.05, amount=3)
    time.sleep(0.1)
    assert storage.get("key") == 0
    assert storage.incr("key", 60) == 1
    storage.clear("key")
    assert storage.get("key") == 0
    storage.incr("a", 60)
    storage.incr("b", 60)
    assert storage.reset() == 2
    assert storage.check()
