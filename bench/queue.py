"""Do the daily queue and recording an answer stay fast as the review log grows?

For each backend and size, builds a fresh database: migrated, the question bank
synced, a probe learner with a fixed 500-review history, and enough other
learners (2,000 in all) to bring the log to the size, written by the bulk
seeder (`quizsvc demo-data`). Then it times, for the probe learner, building
the daily queue and recording one answer (a fresh session and a commit each,
as a request would), and prints medians. The probe learner is the same at every
size, so the ratio shows what the rest of the table costs: with the indexes
doing their job, the 1M figure stays within 1.5x of the 10k one.

PostgreSQL runs when QUIZSVC_TEST_POSTGRES_URL (or --postgres-url) is set, in
a private schema that is dropped afterwards.

Run: .venv/bin/python bench/queue.py [--sizes 10000,1000000] [--learners 2000]
     [--backends sqlite,postgresql] [--runs 40]
"""

from __future__ import annotations

import argparse
import os
import secrets
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path

# This file shares its name with the standard library's `queue`; take its folder
# off the import path so that `import queue` (psycopg does) finds the real one.
HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]
sys.path.insert(0, str(HERE.parent))

from sqlalchemy import select, text  # noqa: E402
from sqlalchemy.engine import make_url  # noqa: E402
from sqlalchemy.orm import Session  # noqa: E402
from sqlalchemy.pool import NullPool  # noqa: E402

from quizsvc.bank import load  # noqa: E402
from quizsvc.db import make_engine, upgrade  # noqa: E402
from quizsvc.models import Item, User  # noqa: E402
from quizsvc.scheduling import GradedAnswer  # noqa: E402
from quizsvc.services.bank_sync import sync_bank  # noqa: E402
from quizsvc.services.demo import seed_demo_data  # noqa: E402
from quizsvc.services.queue import build_daily_queue  # noqa: E402
from quizsvc.services.reviews import lock_learner, store_answer  # noqa: E402

NOW = datetime(2026, 11, 30, 4, 0, tzinfo=UTC)
PROBE_REVIEWS = 500
TARGET_RATIO = 1.5


def timed(work) -> float:
    start = time.perf_counter()
    work()
    return (time.perf_counter() - start) * 1000


def measure(engine, runs: int) -> tuple[float, float]:
    """Median milliseconds to build the probe's queue, and to record one answer."""
    with Session(engine) as session:
        probe = session.scalar(select(User.id).where(User.username == "probe-00001"))
        kinds = dict(session.execute(select(Item.id, Item.type)).all())
    queue_times, record_times = [], []
    for _ in range(3):  # warm the caches and the connection pool
        with Session(engine) as session:
            build_daily_queue(session, session.get(User, probe), NOW)
    for _ in range(runs):
        with Session(engine) as session:
            user = session.get(User, probe)
            queue_times.append(timed(partial(build_daily_queue, session, user, NOW)))
    for run in range(runs):
        with Session(engine) as session:
            user = session.get(User, probe)
            queue = build_daily_queue(session, user, NOW)
            item = queue[run % len(queue)].item_id if queue else next(iter(kinds))
            moment = NOW + timedelta(seconds=run)
            answer = (
                {"self_rating": "good"}
                if kinds[item] == "recall"
                else {"graded": GradedAnswer(correct=run % 4 != 0)}
            )
            session.commit()  # the answer's timing starts on a fresh transaction
            start = time.perf_counter()
            lock_learner(session, user)
            store_answer(
                session,
                user,
                session.get(Item, item),
                duration_ms=9000,
                now=moment,
                idempotency_key=f"bench-{run}",
                **answer,
            )
            session.commit()
            record_times.append((time.perf_counter() - start) * 1000)
    return statistics.median(queue_times), statistics.median(record_times)


def prepare(url: str, size: int, learners: int) -> tuple[object, float]:
    """Migrate, sync the bank, seed; return the engine and the seeding seconds."""
    engine = make_engine(url)
    upgrade(engine)
    with Session(engine) as session:
        sync_bank(session, load(), now=NOW - timedelta(days=400))
        session.commit()
    start = time.perf_counter()
    seed_demo_data(engine, learners=1, reviews=PROBE_REVIEWS, prefix="probe",
                   seed=7, now=NOW)  # fmt: skip
    seed_demo_data(engine, learners=learners - 1, reviews=size - PROBE_REVIEWS,
                   prefix="demo", seed=11, now=NOW)  # fmt: skip
    return engine, time.perf_counter() - start


class Postgres:
    """A private schema on the given server, dropped on exit."""

    def __init__(self, base: str):
        self.base = base
        self.schema = f"quizsvc_bench_{os.getpid()}_{secrets.token_hex(3)}"
        self.admin = make_engine(base, poolclass=NullPool)

    def __enter__(self) -> str:
        with self.admin.begin() as connection:
            connection.execute(text(f'CREATE SCHEMA "{self.schema}"'))
        url = make_url(self.base).update_query_dict(
            {"options": f"-csearch_path={self.schema}"}
        )
        return url.render_as_string(hide_password=False)

    def __exit__(self, *exc) -> None:
        with self.admin.begin() as connection:
            connection.execute(text(f'DROP SCHEMA "{self.schema}" CASCADE'))
        self.admin.dispose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,1000000")
    parser.add_argument("--learners", type=int, default=2000)
    parser.add_argument("--backends", default="sqlite,postgresql")
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument(
        "--postgres-url", default=os.environ.get("QUIZSVC_TEST_POSTGRES_URL")
    )
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    backends = args.backends.split(",")
    if "postgresql" in backends and not args.postgres_url:
        print("postgresql: skipped (set QUIZSVC_TEST_POSTGRES_URL or --postgres-url)")
        backends.remove("postgresql")

    print(f"{args.learners:,} learners; the probe learner has {PROBE_REVIEWS} reviews")
    print(f"{'backend':<11}{'reviews':>11}{'seeding s':>11}{'queue ms':>11}"
          f"{'answer ms':>11}")  # fmt: skip
    results: dict[str, dict[int, tuple[float, float]]] = {}
    for backend in backends:
        for size in sizes:
            with tempfile.TemporaryDirectory() as folder:
                if backend == "sqlite":
                    context = None
                    url = f"sqlite:///{Path(folder) / 'bench.sqlite3'}"
                else:
                    context = Postgres(args.postgres_url)
                    url = context.__enter__()
                try:
                    engine, seeding = prepare(url, size, args.learners)
                    queue_ms, answer_ms = measure(engine, args.runs)
                    engine.dispose()
                finally:
                    if context is not None:
                        context.__exit__(None, None, None)
            results.setdefault(backend, {})[size] = (queue_ms, answer_ms)
            print(f"{backend:<11}{size:>11,}{seeding:>11.1f}{queue_ms:>11.2f}"
                  f"{answer_ms:>11.2f}", flush=True)  # fmt: skip
    small, large = min(sizes), max(sizes)
    for backend, by_size in results.items():
        if small == large:
            continue
        queue_ratio = by_size[large][0] / by_size[small][0]
        answer_ratio = by_size[large][1] / by_size[small][1]
        print(f"{backend}: {large:,} vs {small:,} reviews — queue {queue_ratio:.2f}x, "
              f"answer {answer_ratio:.2f}x (target ≤ {TARGET_RATIO}x)")  # fmt: skip


if __name__ == "__main__":
    main()
