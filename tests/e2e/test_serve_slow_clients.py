"""Slow clients cannot starve learners: `quizsvc serve` under a slowloris attack.

Each test starts `quizsvc serve` with its defaults (2 workers), opens hundreds
of connections that send their request a byte per second, and meanwhile times
a learner's drill requests and the probes. Before the asyncio worker, 8 such
connections held every thread and a learner waited for the whole attack.
"""

from __future__ import annotations

import socket
import time
import urllib.request

import httpx
import pytest

from bench.load import Seeds, answer_for, provision_learners
from bench.slow_clients import SlowClients
from tests.fixtures.serving import start_server, stop_server

pytestmark = pytest.mark.slow

# Far above what a learner's request takes on a busy CI machine, far below the
# attack: a starved request would wait for the whole of it.
PATIENCE = 5.0


def host_port(url: str) -> tuple[str, int]:
    host, port = url.removeprefix("http://").rstrip("/").rsplit(":", 1)
    return host, int(port)


def drill_while(url: str, instance, seconds: float) -> list[tuple[str, int, float]]:
    """Answer drill items for `seconds`; return (request, status, seconds) of each."""
    database = f"sqlite:///{instance / 'quizsvc.sqlite3'}"
    (token, user_id), *_ = provision_learners(database, 1)
    seeds = Seeds(database)
    timings = []
    until = time.monotonic() + seconds
    with httpx.Client(
        base_url=url + "api/v1",
        headers={"Authorization": f"Bearer {token}"},
        timeout=60,
    ) as client:
        while time.monotonic() < until:
            started = time.monotonic()
            step = client.get("/drill/next")
            timings.append(("next", step.status_code, time.monotonic() - started))
            item = step.json()
            if item.get("done"):
                # Every item left is a learning step that may not be asked
                # again yet (the spacing rule): still a request served.
                assert item["day_done"] is False, item
                time.sleep(0.5)
                continue
            body = answer_for(item, True, lambda: seeds(user_id))
            started = time.monotonic()
            answered = client.post(
                "/drill/answer", json={**body, "idempotency_key": f"k{len(timings)}"}
            )
            timings.append(("answer", answered.status_code, time.monotonic() - started))
            started = time.monotonic()
            health = client.get(url + "healthz")
            timings.append(("healthz", health.status_code, time.monotonic() - started))
    seeds.engine.dispose()
    return timings


@pytest.mark.parametrize("part", ["headers", "body"])
def test_learners_are_served_while_500_clients_dribble_their_requests(tmp_path, part):
    """With 500 connections sending their headers (or body) at 1 byte/s, does a
    learner's drill still answer at once, and /healthz too?"""
    process, url = start_server(tmp_path, "--workers", "2")
    slow = SlowClients(*host_port(url), 500, body=part == "body")
    try:
        slow.start()
        time.sleep(2)  # every slow connection has begun its request
        timings = drill_while(url, tmp_path, 6)
        still_open = len(slow.sockets)
    finally:
        slow.stop()
        stop_server(process)
    assert still_open == 500, "the attack was still on while the learner worked"
    assert {status for _, status, _ in timings} <= {200, 201}, timings
    assert len(timings) >= 6
    slowest = max(timings, key=lambda t: t[2])
    assert slowest[2] < PATIENCE, slowest


def test_a_connection_that_never_finishes_its_headers_is_closed(tmp_path, monkeypatch):
    """Are slow connections dropped after REQUEST_READ_TIMEOUT, headers or body?"""
    monkeypatch.setenv("QUIZSVC_REQUEST_READ_TIMEOUT", "2")
    process, url = start_server(tmp_path, "--workers", "2")
    try:
        headers = SlowClients(*host_port(url), 20)
        bodies = SlowClients(*host_port(url), 20, body=True)
        headers.start()
        bodies.start()
        deadline = time.monotonic() + 15
        while (headers.sockets or bodies.sockets) and time.monotonic() < deadline:
            time.sleep(0.25)
        assert headers.closed_by_server == 20
        assert bodies.closed_by_server == 20
        headers.stop()
        bodies.stop()
        # A body that never came in time is answered 408 before the close.
        with socket.create_connection(host_port(url), timeout=10) as raw:
            raw.sendall(
                b"POST /api/v1/problems HTTP/1.1\r\nHost: x\r\n"
                b"Content-Type: application/json\r\nContent-Length: 10\r\n\r\n{"
            )
            assert raw.recv(100).startswith(b"HTTP/1.1 408")
        with urllib.request.urlopen(url + "healthz", timeout=10) as response:
            assert response.status == 200
    finally:
        stop_server(process)
