"""Do slow clients make learners wait? A slowloris attack beside one learner.

Starts `quizsvc serve` with its default settings (or uses --url), opens N
connections that send a request's headers one byte per second and never finish
them (or, with --body, finish the headers and send a body one byte per second),
and meanwhile runs one learner through the drill cycle (GET /api/v1/drill/next,
POST /api/v1/drill/answer) at a steady pace and polls /healthz twice a second.

It prints the learner's request latencies (p50, p99, max) and errors before and
during the attack, the /healthz answers during it, how many slow connections
the server closed, and the load average.

Run: .venv/bin/python bench/slow_clients.py [--connections 500] [--seconds 30]
     [--body] [--workers 2] [--url URL --database-url URL]
"""

from __future__ import annotations

import argparse
import os
import random
import secrets
import socket
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

HERE = Path(__file__).resolve()
# bench/queue.py would shadow the standard library's `queue` (gunicorn needs it).
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE.parent]
sys.path.insert(0, str(HERE.parents[1]))

from bench.load import (  # noqa: E402
    Seeds,
    answer_for,
    provision_learners,
    quizsvc_command,
    served,
    server_env,
)


class SlowClients:
    """N connections that each send one more byte of their request every second."""

    def __init__(self, host: str, port: int, count: int, *, body: bool = False):
        self.address = (host, port)
        self.count = count
        self.body = body
        self.sockets: list[socket.socket] = []
        self.closed_by_server = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._dribble, daemon=True)

    def start(self) -> None:
        for _ in range(self.count):
            connection = socket.create_connection(self.address, timeout=5)
            if self.body:
                connection.sendall(
                    b"POST /api/v1/problems HTTP/1.1\r\nHost: x\r\n"
                    b"Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n"
                )
            else:
                connection.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
            connection.setblocking(False)
            self.sockets.append(connection)
        self._thread.start()

    def _dribble(self) -> None:
        byte = b" " if self.body else b"a"
        header_started = False
        while not self._stop.wait(1.0):
            for connection in list(self.sockets):
                try:
                    if not self.body and not header_started:
                        connection.send(b"X-Pad: ")
                    connection.send(byte)
                except OSError:
                    self.sockets.remove(connection)
                    self.closed_by_server += 1
                    connection.close()
            header_started = True

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()
        for connection in self.sockets:
            connection.close()


class Learner:
    """One learner answering drill items at a steady pace, each request timed."""

    def __init__(self, base: str, tokens: list[tuple[str, int]], seeds: Seeds):
        self.client = httpx.Client(base_url=base + "api/v1", timeout=60)
        self.accounts = iter(tokens)
        self.seeds = seeds
        self.samples: list[tuple[float, float, int]] = []  # (start, seconds, status)
        self._next_account()
        self.rng = random.Random(1)

    def _next_account(self) -> None:
        token, self.user_id = next(self.accounts)
        self.client.headers["Authorization"] = f"Bearer {token}"

    def _timed(self, method: str, path: str, **kwargs) -> httpx.Response | None:
        started = time.monotonic()
        try:
            response = self.client.request(method, path, **kwargs)
            status = response.status_code
        except httpx.HTTPError:
            response, status = None, 0
        self.samples.append((started, time.monotonic() - started, status))
        return response

    def run(self, until: float, pace: float) -> None:
        while time.monotonic() < until:
            started = time.monotonic()
            step = self._timed("GET", "/drill/next")
            if step is not None and step.status_code == 200:
                item = step.json()
                if item.get("done"):
                    self._next_account()
                else:
                    body = answer_for(
                        item, True, lambda user=self.user_id: self.seeds(user)
                    )
                    body["idempotency_key"] = secrets.token_hex(8)
                    self._timed("POST", "/drill/answer", json=body)
            time.sleep(max(0.0, pace - (time.monotonic() - started)))


def poll_health(base: str, until: float, answers: list[str]) -> None:
    with httpx.Client(timeout=5) as client:
        while time.monotonic() < until:
            started = time.monotonic()
            try:
                answers.append(str(client.get(base + "healthz").status_code))
            except httpx.HTTPError as exc:
                answers.append(type(exc).__name__)
            time.sleep(max(0.0, 0.5 - (time.monotonic() - started)))


def summary(samples: list[tuple[float, float, int]], since: float, until: float):
    chosen = [s for s in samples if since <= s[0] < until]
    seconds = [s[1] for s in chosen]
    errors = sum(1 for s in chosen if not 200 <= s[2] < 300)
    if len(seconds) < 2:
        return f"{len(seconds)} requests"
    cuts = statistics.quantiles(seconds, n=100, method="inclusive")
    return (
        f"{len(seconds):4d} requests   p50 {cuts[49] * 1000:7.1f} ms   "
        f"p99 {cuts[98] * 1000:7.1f} ms   max {max(seconds) * 1000:7.1f} ms   "
        f"errors {errors}"
    )


def attack(base: str, database_url: str, args: argparse.Namespace) -> None:
    tokens = provision_learners(database_url, 4)
    seeds = Seeds(database_url)
    learner = Learner(base, tokens, seeds)
    host, port = base.removeprefix("http://").rstrip("/").rsplit(":", 1)
    quiet = time.monotonic() + args.warmup
    learner.run(quiet, args.pace)
    slow = SlowClients(host, int(port), args.connections, body=args.body)
    slow.start()
    began = time.monotonic()
    until = began + args.seconds
    health: list[str] = []
    poller = threading.Thread(target=poll_health, args=(base, until, health))
    poller.start()
    learner.run(until, args.pace)
    poller.join()
    open_at_end = len(slow.sockets)
    slow.stop()
    seeds.engine.dispose()
    kind = "bodies" if args.body else "headers"
    print(
        f"{args.connections} connections sending {kind} at 1 byte/s for "
        f"{args.seconds:g} s; load average {os.getloadavg()[0]:.2f}"
    )
    print(f"learner before: {summary(learner.samples, 0, began)}")
    print(f"learner during: {summary(learner.samples, began, until)}")
    counts = {answer: health.count(answer) for answer in sorted(set(health))}
    print(f"/healthz during: {counts}")
    print(
        f"slow connections closed by the server: {slow.closed_by_server}, "
        f"still open at the end: {open_at_end}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--connections", type=int, default=500)
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--warmup", type=float, default=5)
    parser.add_argument("--pace", type=float, default=0.25, help="seconds per cycle")
    parser.add_argument("--body", action="store_true", help="dribble bodies instead")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--url", help="attack a running server instead")
    parser.add_argument("--database-url", help="its database (with --url)")
    args = parser.parse_args()
    if args.url:
        attack(args.url.rstrip("/") + "/", args.database_url, args)
        return
    with tempfile.TemporaryDirectory(prefix="quizsvc-slow-") as tmp:
        instance = Path(tmp)
        url = f"sqlite:///{instance / 'quizsvc.sqlite3'}"
        env = server_env(instance, url, "FULL")
        with served(quizsvc_command(args.workers), env, instance / "serve.log") as base:
            attack(base, url, args)


if __name__ == "__main__":
    main()
