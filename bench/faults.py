"""What do learners see when a dependency breaks under load? One fault, measured.

Serves the app (`quizsvc serve --workers 2`) on a database of its own, runs
learners through the drill in a closed loop (next, answer, explanation after
a wrong answer; a failed answer is retried with the same idempotency key every
0.5 s), polls /healthz and /readyz twice a second and, for the Redis and disk
faults, signs a learner in every 0.5 s and registers one every second. After
`--before` seconds it injects the fault, keeps it `--during` seconds, heals it
and watches `--after` seconds more. Then it checks every acknowledged answer
against the reviews table.

Faults (the review of 2026-12-02 names them):
  pg-restart    PostgreSQL `pg_ctl -m fast stop`, then start at once
  pg-stop       PostgreSQL stopped for --during seconds
  pg-freeze     every PostgreSQL process SIGSTOPped for --during seconds
  redis-stop    the rate-limit Redis stopped
  redis-freeze  the rate-limit Redis SIGSTOPped
  disk-full     the instance folder (SQLite) on a 20 MiB tmpfs, filled
  slow-clients  500 connections sending headers at 1 byte/s

It prints, for the fault window: what clients saw (statuses per request
kind), the longest request, how long after healing the first answer was
acknowledged, the probes' answers, and acknowledged answers lost / doubled /
stored without a 2xx.

Run (as root, for the private servers and the tmpfs):
  .venv/bin/python bench/faults.py pg-freeze [--learners 6] [--before 10]
      [--during 30] [--after 10] [--backend sqlite|postgresql]
"""

from __future__ import annotations

import argparse
import collections
import os
import random
import secrets
import sys
import tempfile
import threading
import time
from contextlib import ExitStack
from pathlib import Path

import httpx

HERE = Path(__file__).resolve()
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE.parent]
sys.path.insert(0, str(HERE.parents[1]))

from bench.load import (  # noqa: E402
    Seeds,
    answer_for,
    provision_learners,
    quizsvc_command,
    served,
)
from bench.slow_clients import SlowClients  # noqa: E402
from tests import faults  # noqa: E402

PASSWORD = "correct horse battery staple"
RIGHT_SHARE = 0.8


class Record:
    """Every request: when it started and ended, what it was, what came back."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.rows: list[tuple[float, float, str, int]] = []
        self.acks: list[tuple[str, int]] = []  # (idempotency key, review id)
        self.keys_tried: set[str] = set()
        self.not_ready: collections.Counter[str] = collections.Counter()

    def add(self, started: float, kind: str, status: int) -> None:
        with self.lock:
            self.rows.append((started, time.monotonic(), kind, status))


def request(
    client: httpx.Client, record: Record, kind: str, method: str, url: str, **kw
):
    started = time.monotonic()
    try:
        response = client.request(method, url, **kw)
        status = response.status_code
    except httpx.HTTPError:
        response, status = None, 0
    record.add(started, kind, status)
    return response


def learner(base, token, user_id, seeds, record, stop, seed):
    rng = random.Random(seed)
    with httpx.Client(
        base_url=base + "api/v1",
        headers={"Authorization": f"Bearer {token}"},
        timeout=120,
    ) as client:
        while not stop.is_set():
            step = request(client, record, "next", "GET", "/drill/next")
            if step is None or step.status_code != 200:
                time.sleep(0.5)
                continue
            item = step.json()
            if item.get("done"):
                return
            body = answer_for(item, rng.random() < RIGHT_SHARE, lambda: seeds(user_id))
            body["idempotency_key"] = key = secrets.token_hex(8)
            with record.lock:
                record.keys_tried.add(key)
            while True:
                answered = request(
                    client, record, "answer", "POST", "/drill/answer", json=body
                )
                if answered is not None and answered.status_code in (200, 201):
                    break
                if answered is not None and 400 <= answered.status_code < 500:
                    break
                time.sleep(0.5)
            if answered is None or answered.status_code not in (200, 201):
                continue
            result = answered.json()
            with record.lock:
                record.acks.append((key, result["review_id"]))
            if result.get("requires_explanation"):
                while not stop.is_set():
                    explained = request(
                        client,
                        record,
                        "explain",
                        "POST",
                        "/drill/explanation",
                        json={
                            "review_id": result["review_id"],
                            "text": "rows and columns",
                        },
                    )
                    if explained is not None and explained.status_code < 500:
                        break
                    time.sleep(0.5)


def poller(base, record, stop, kind, method, path, pause, body=None):
    with httpx.Client(base_url=base, timeout=10) as client:
        number = 0
        while not stop.is_set():
            number += 1
            payload = body(number) if callable(body) else body
            response = request(client, record, kind, method, path, json=payload)
            if (
                kind == "readyz"
                and response is not None
                and response.status_code == 503
            ):
                failing = {
                    name: check.get("message", check["status"])[:80]
                    for name, check in response.json()["checks"].items()
                    if check["status"] not in ("ok", "fallback")
                }
                with record.lock:
                    record.not_ready[str(failing)] += 1
            time.sleep(pause)


def check_acks(database_url: str, record: Record) -> dict[str, int]:
    from sqlalchemy import text
    from sqlalchemy.pool import NullPool

    from quizsvc.db import make_engine

    engine = make_engine(database_url, poolclass=NullPool)
    with engine.connect() as connection:
        rows = connection.execute(
            text(
                "SELECT idempotency_key, id FROM reviews "
                "WHERE idempotency_key IS NOT NULL"
            )
        ).all()
    engine.dispose()
    stored = collections.Counter(key for key, _ in rows)
    ids = {key: review_id for key, review_id in rows}
    acked = dict(record.acks)
    return {
        "acked": len(acked),
        "lost": sum(1 for key, rid in acked.items() if ids.get(key) != rid),
        "doubled": sum(1 for count in stored.values() if count > 1),
        "stored without a 2xx": sum(
            1 for key in stored if key in record.keys_tried and key not in acked
        ),
    }


def summarize(record: Record, fault_at: float, healed_at: float, end: float) -> None:
    window = [r for r in record.rows if r[1] >= fault_at and r[0] <= healed_at]
    print(
        f"fault window {healed_at - fault_at:.1f} s; "
        f"after healing {end - healed_at:.1f} s"
    )
    kinds = sorted({r[2] for r in record.rows})
    for kind in kinds:
        seen = collections.Counter(r[3] for r in window if r[2] == kind)
        longest = max((r[1] - r[0] for r in record.rows if r[2] == kind), default=0)
        shown = ", ".join(
            f"{status or 'no answer'} x{n}" for status, n in sorted(seen.items())
        )
        print(
            f"  {kind:9} during the fault: {shown or '-'}; "
            f"longest request {longest:.2f} s"
        )
    longest = max(record.rows, key=lambda r: r[1] - r[0])
    print(
        f"longest request overall: {longest[2]} "
        f"{longest[1] - longest[0]:.2f} s (status {longest[3]})"
    )
    for reason, count in record.not_ready.most_common(3):
        print(f"  /readyz 503 x{count}: {reason}")
    answers_after = sorted(
        r[1]
        for r in record.rows
        if r[2] == "answer" and r[3] in (200, 201) and r[1] > healed_at
    )
    if answers_after:
        print(
            f"first acknowledged answer {answers_after[0] - healed_at:.2f} s "
            "after healing"
        )
    else:
        print("no answer acknowledged after healing")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "fault",
        choices=[
            "pg-restart",
            "pg-stop",
            "pg-freeze",
            "redis-stop",
            "redis-freeze",
            "disk-full",
            "slow-clients",
        ],
    )
    parser.add_argument("--backend", choices=["sqlite", "postgresql"])
    parser.add_argument("--learners", type=int, default=6)
    parser.add_argument("--before", type=float, default=10)
    parser.add_argument("--during", type=float, default=30)
    parser.add_argument("--after", type=float, default=10)
    args = parser.parse_args()
    backend = args.backend or (
        "postgresql" if args.fault.startswith("pg") else "sqlite"
    )
    with ExitStack() as stack:
        tmp = Path(
            stack.enter_context(tempfile.TemporaryDirectory(prefix="quizsvc-faults-"))
        )
        instance = tmp / "instance"
        env = {
            **os.environ,
            "QUIZSVC_INSTANCE_PATH": str(instance),
            "QUIZSVC_LOGIN_RATE_LIMIT": "100000 per minute",
            "QUIZSVC_REGISTER_RATE_LIMIT": "100000 per minute",
            "PYTHONUNBUFFERED": "1",
        }
        cluster = redis = None
        if backend == "postgresql":
            cluster = stack.enter_context(faults.private_postgres())
            database_url = cluster.url
        else:
            if args.fault == "disk-full":
                stack.enter_context(faults.small_disk(instance, 20 * 1024))
                env["QUIZSVC_READYZ_MIN_FREE_MB"] = "1"
            database_url = f"sqlite:///{instance / 'quizsvc.sqlite3'}"
        env["QUIZSVC_DATABASE_URL"] = database_url
        if args.fault.startswith("redis"):
            redis = stack.enter_context(faults.private_redis(tmp / "redis"))
            env["QUIZSVC_RATELIMIT_STORAGE_URI"] = redis.url
        instance.mkdir(parents=True, exist_ok=True)
        base = stack.enter_context(served(quizsvc_command(2), env, tmp / "serve.log"))
        accounts = provision_learners(database_url, args.learners)
        seeds = Seeds(database_url)
        stack.callback(seeds.engine.dispose)
        httpx.post(
            base + "api/v1/auth/register",
            json={"username": "poller", "password": PASSWORD},
            timeout=30,
        )
        record, stop = Record(), threading.Event()
        threads = [
            threading.Thread(
                target=learner, args=(base, token, uid, seeds, record, stop, n)
            )
            for n, (token, uid) in enumerate(accounts)
        ]
        threads.append(
            threading.Thread(
                target=poller,
                args=(base, record, stop, "healthz", "GET", "healthz", 0.5),
            )
        )
        threads.append(
            threading.Thread(
                target=poller, args=(base, record, stop, "readyz", "GET", "readyz", 0.5)
            )
        )
        if args.fault.startswith("redis") or args.fault == "disk-full":
            login = {"username": "poller", "password": PASSWORD}
            threads.append(
                threading.Thread(
                    target=poller,
                    args=(
                        base,
                        record,
                        stop,
                        "login",
                        "POST",
                        "api/v1/auth/login",
                        0.5,
                        login,
                    ),
                )
            )
            prefix = secrets.token_hex(3)
            threads.append(
                threading.Thread(
                    target=poller,
                    args=(
                        base,
                        record,
                        stop,
                        "register",
                        "POST",
                        "api/v1/auth/register",
                        1.0,
                        lambda n: {"username": f"r{prefix}{n}", "password": PASSWORD},
                    ),
                )
            )
        for thread in threads:
            thread.start()
        time.sleep(args.before)
        fault_at = time.monotonic()
        slow = filler = None
        if args.fault == "pg-restart":
            cluster.stop("fast")
            cluster.start()
        elif args.fault == "pg-stop":
            cluster.stop("fast")
        elif args.fault == "pg-freeze":
            cluster.freeze()
        elif args.fault == "redis-stop":
            redis.stop()
        elif args.fault == "redis-freeze":
            redis.freeze()
        elif args.fault == "disk-full":
            filler = faults.fill(instance)
        elif args.fault == "slow-clients":
            host, port = base.removeprefix("http://").rstrip("/").rsplit(":", 1)
            slow = SlowClients(host, int(port), 500)
            slow.start()
        if args.fault != "pg-restart":
            time.sleep(args.during)
        if args.fault == "pg-stop":
            cluster.start()
        elif args.fault == "pg-freeze":
            cluster.thaw()
        elif args.fault == "redis-stop":
            redis.start()
        elif args.fault == "redis-freeze":
            redis.thaw()
        elif args.fault == "disk-full":
            filler.unlink()
        elif args.fault == "slow-clients":
            slow.stop()
        healed_at = time.monotonic()
        time.sleep(args.after)
        stop.set()
        for thread in threads:
            thread.join(timeout=150)
        end = time.monotonic()
        load = os.getloadavg()[0]
        print(
            f"{args.fault} on {backend}, {args.learners} learners; "
            f"load average {load:.2f}"
        )
        summarize(record, fault_at, healed_at, end)
        print(
            "acknowledged answers: "
            + ", ".join(f"{k} {v}" for k, v in check_acks(database_url, record).items())
        )
        log = (tmp / "serve.log").read_text()
        print(
            f"server log: {len(log.splitlines())} lines, "
            f"{log.count('Traceback')} tracebacks"
        )
        for error in sorted(set(_traceback_ends(log)))[:5]:
            print(f"  e.g. {error}")


def _traceback_ends(log: str):
    """The exception line that ends each traceback in a log."""
    lines = log.splitlines()
    for number, line in enumerate(lines):
        if line.startswith("Traceback"):
            for later in lines[number + 1 :]:
                if later and not later.startswith((" ", "Traceback")):
                    yield later[:200]
                    break


if __name__ == "__main__":
    main()
