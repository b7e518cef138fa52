"""Do the daily queue and recording an answer stay fast as the review log grows?

For each backend and size, builds a fresh database: migrated, the question bank
synced, a probe learner with a fixed 500-review history (written by the demo
seeder, `quizsvc demo-data`: FSRS-6 states, growing gaps), and enough other
learners (2,000 in all) to bring the log to the size. Their cards go in by
the driver's bulk path (executemany / COPY) and their reviews by one
INSERT ... SELECT over a number series, foreign keys unchecked and commits
unflushed, so ten million reviews take minutes, not an hour; it prints how
long each size took to write.

Then it times, for the probe learner, building the daily queue and recording
one answer (a fresh session and a commit each, as a request would), the sizes
taking turns a few runs at a time, and prints medians. The probe learner is
the same at every size, so the ratio shows what the rest of the table costs:
with the indexes doing their job, the largest size stays within 1.5x of the
smallest.

PostgreSQL runs when QUIZSVC_TEST_POSTGRES_URL (or --postgres-url) is set, in
a private schema that is dropped afterwards.

Run: .venv/bin/python bench/queue.py [--sizes 10000,10000000] [--learners 2000]
     [--backends sqlite,postgresql] [--runs 40]
"""

from __future__ import annotations

import argparse
import os
import secrets
import sqlite3
import statistics
import sys
import tempfile
import time
from contextlib import ExitStack, contextmanager
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path

# This file shares its name with the standard library's `queue`; take its folder
# off the import path so that `import queue` (psycopg does) finds the real one.
HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]
sys.path.insert(0, str(HERE.parent))

from sqlalchemy import create_engine, select, text  # noqa: E402
from sqlalchemy.engine import make_url  # noqa: E402
from sqlalchemy.orm import Session  # noqa: E402
from sqlalchemy.pool import NullPool  # noqa: E402

from quizsvc.bank import load  # noqa: E402
from quizsvc.db import make_engine, upgrade  # noqa: E402
from quizsvc.models import STATE_REVIEW, Item, User  # noqa: E402
from quizsvc.scheduling import GradedAnswer  # noqa: E402
from quizsvc.services.bank_sync import sync_bank  # noqa: E402
from quizsvc.services.demo import seed_demo_data  # noqa: E402
from quizsvc.services.queue import build_daily_queue  # noqa: E402
from quizsvc.services.reviews import lock_learner, store_answer  # noqa: E402

NOW = datetime(2026, 11, 30, 4, 0, tzinfo=UTC)
PROBE_REVIEWS = 500
TARGET_RATIO = 1.5
# Measuring rounds: the sizes take turns (see main).
ROUNDS = 5


def timed(work) -> float:
    start = time.perf_counter()
    work()
    return (time.perf_counter() - start) * 1000


def measure(engine, runs: int, first: int = 0) -> tuple[list[float], list[float]]:
    """Milliseconds to build the probe's queue, and to record one answer, `runs`
    times each (answers numbered from `first`, so each has its own key)."""
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
    for run in range(first, first + runs):
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
    return queue_times, record_times


def prepare(url: str, size: int, learners: int) -> tuple[object, float]:
    """Migrate, sync the bank, write the log; return the engine and the seconds
    the log took to write."""
    engine = make_engine(url)
    upgrade(engine)
    with Session(engine) as session:
        sync_bank(session, load(), now=NOW - timedelta(days=400))
        session.commit()
    start = time.perf_counter()
    # The probe's history is realistic (FSRS-6 states, growing gaps) and the
    # same at every size: it is what the queue and the answer read.
    seed_demo_data(engine, learners=1, reviews=PROBE_REVIEWS, prefix="probe",
                   seed=7, now=NOW)  # fmt: skip
    # Everyone else only has to be there, in the tables and their indexes, so
    # their rows are written by the database itself from a number series.
    others = seed_demo_data(engine, learners=learners - 1, reviews=0,
                            prefix="demo", seed=11, now=NOW)  # fmt: skip
    fill_log(engine, others.usernames, size - PROBE_REVIEWS)
    return engine, time.perf_counter() - start


# About eight reviews per card (as quizsvc demo-data writes them) spread over
# the last DAYS days; one answer in ten forgotten.
REVIEWS_PER_CARD = 8
DAYS = 120


def fill_log(engine, usernames: tuple[str, ...], reviews: int) -> None:
    """Give the learners named cards and `reviews` reviews between them, fast.

    The cards (a few hundred thousand at most) go in with one multi-row insert
    each; the reviews come from one INSERT ... SELECT over a number series,
    in card order, so the database writes them without a round trip per row
    and its indexes grow at their right edges.
    """
    with engine.connect() as connection:
        items = (
            connection.execute(
                select(Item.id).where(Item.retired_at.is_(None)).order_by(Item.position)
            )
            .scalars()
            .all()
        )
        user_ids = (
            connection.execute(
                select(User.id).where(User.username.in_(usernames)).order_by(User.id)
            )
            .scalars()
            .all()
        )
    per_learner = [reviews // len(user_ids)] * len(user_ids)
    for index in range(reviews % len(user_ids)):
        per_learner[index] += 1
    cards = []
    for offset, (user_id, count) in enumerate(zip(user_ids, per_learner, strict=True)):
        card_count = min(len(items), max(1, -(-count // REVIEWS_PER_CARD)))
        base, extra = divmod(count, card_count)
        for number in range(card_count):
            item = items[(offset * 7 + number) % len(items)]
            reps = base + (1 if number < extra else 0)
            if reps:
                cards.append({"user_id": user_id, "item_id": item, "reps": reps})
    sqlite = engine.dialect.name == "sqlite"
    with _bulk_connection(engine) as connection:
        first = connection.scalar(text("SELECT COALESCE(MAX(id), 0) FROM cards")) + 1
        rows = [
            (
                first + number, card["user_id"], card["item_id"], STATE_REVIEW,
                20.0, 5.0,
                # Due dates spread over the two months around today.
                NOW + timedelta(hours=(number * 37) % 1440 - 720),
                NOW - timedelta(hours=1 + number % 48),
                card["reps"], 0, NOW - timedelta(days=DAYS),
                NOW - timedelta(hours=1 + number % 48),
            )
            for number, card in enumerate(cards)
        ]  # fmt: skip
        _write_rows(connection, "cards", CARD_COLUMNS, rows, sqlite)
        _insert_reviews(connection, first, sqlite)
    with engine.begin() as connection:
        if not sqlite:
            for table in ("cards", "reviews"):
                connection.execute(
                    text(
                        f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), "
                        f"(SELECT MAX(id) FROM {table}))"
                    )
                )
        if sqlite:
            # A sample of each index is enough for the planner (PostgreSQL's
            # ANALYZE samples by itself).
            connection.exec_driver_sql("PRAGMA analysis_limit = 1000")
        connection.exec_driver_sql("ANALYZE")


CARD_COLUMNS = (
    "id", "user_id", "item_id", "state", "stability", "difficulty", "due",
    "last_review", "reps", "lapses", "created_at", "updated_at",
)  # fmt: skip


def _write_rows(connection, table, columns, rows, sqlite: bool) -> None:
    """Rows by the driver's fastest path: executemany on SQLite, COPY elsewhere."""
    if sqlite:
        # The text SQLAlchemy's SQLite DATETIME writes, so these rows compare
        # and read back as the ORM's own.
        rows = [
            tuple(
                f"{v.astimezone(UTC):%Y-%m-%d %H:%M:%S.%f}"
                if isinstance(v, datetime)
                else v
                for v in row
            )
            for row in rows
        ]
        marks = ", ".join("?" for _ in columns)
        connection.exec_driver_sql(
            f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks})", rows
        )
        return
    cursor = connection.connection.driver_connection.cursor()
    with cursor.copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as copy:
        for row in rows:
            copy.write_row(row)
    cursor.close()


@contextmanager
def _bulk_connection(engine):
    """A transaction for loading rows the bench made consistent itself.

    The foreign keys are not checked row by row (they hold by construction:
    every row points at a user, item and card written just before), which
    would be most of the time a load of ten million rows takes; nor is the
    commit flushed to disk, as a crash would only cost the bench its run.
    """
    if engine.dialect.name == "sqlite":
        # quizsvc's engine turns foreign keys on and begins IMMEDIATE; the
        # pragma only takes effect outside a transaction, so this is a plain
        # connection of the driver's, on the database nothing else uses yet.
        raw = sqlite3.connect(engine.url.database)
        try:
            raw.execute("PRAGMA foreign_keys = OFF")
            raw.execute("PRAGMA synchronous = OFF")
            # Room for the indexes' working set while millions of rows go in.
            raw.execute("PRAGMA cache_size = -1000000")
            bulk = create_engine("sqlite://", creator=lambda: raw, poolclass=NullPool)
            with bulk.begin() as connection:
                yield connection
        finally:
            raw.close()
        return
    with engine.begin() as connection:
        connection.exec_driver_sql("SET LOCAL synchronous_commit TO off")
        # Replica mode skips the triggers that check foreign keys.
        connection.exec_driver_sql("SET LOCAL session_replication_role = replica")
        yield connection


def _insert_reviews(connection, first_card: int, sqlite: bool) -> None:
    """Write each card's `reps` reviews: evenly spaced over DAYS days, Good but
    one in ten Again, with plausible after-states."""
    most = connection.scalar(text("SELECT MAX(reps) FROM cards"))
    columns = (
        "user_id, item_id, card_id, reviewed_at, rating, rating_source, correct, "
        "score, duration_ms, hint_used, state_before, state_after, "
        "stability_after, difficulty_after, due_after"
    )
    forgotten = "(cards.id * 7 + n) % 10 = 0"
    if sqlite:
        # SQLAlchemy's SQLite DATETIME text, so comparisons with bound
        # datetimes order as the ORM's own rows do.
        def moment(offset: str) -> str:
            return (
                f"strftime('%Y-%m-%d %H:%M:%S', cards.created_at, "
                f"'+' || ({offset}) || ' seconds') || '.000000'"
            )

        series = (
            "WITH RECURSIVE series(n) AS (SELECT 0 UNION ALL "
            "SELECT n + 1 FROM series WHERE n + 1 < :most) "
        )
        # CROSS JOIN keeps cards the outer loop: rows come in card order.
        source = "FROM cards CROSS JOIN series WHERE series.n < cards.reps AND"
        true, false = "1", "0"
    else:

        def moment(offset: str) -> str:
            return f"cards.created_at + ({offset}) * interval '1 second'"

        series = ""
        source = (
            "FROM cards CROSS JOIN LATERAL generate_series(0, cards.reps - 1) "
            "AS series(n) WHERE"
        )
        true, false = "true", "false"
    gap = f"({DAYS} * 86400 - 7200) / cards.reps"
    reviewed = moment(f"n * {gap}")
    due_after = moment(f"n * {gap} + 86400 * 3")
    connection.execute(
        text(
            f"{series}INSERT INTO reviews ({columns}) "
            f"SELECT cards.user_id, cards.item_id, cards.id, {reviewed}, "
            f"CASE WHEN {forgotten} THEN 1 ELSE 3 END, 'graded', "
            f"CASE WHEN {forgotten} THEN {false} ELSE {true} END, "
            f"CASE WHEN {forgotten} THEN 0.0 ELSE 1.0 END, 9000 + n % 7000, "
            f"{false}, CASE WHEN n = 0 THEN 0 ELSE 2 END, "
            f"CASE WHEN {forgotten} THEN 3 ELSE 2 END, 3.0 + n, 5.0, {due_after} "
            f"{source} cards.id >= :first"
        ),
        {"first": first_card, "most": most},
    )


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
    parser.add_argument("--sizes", default="10000,10000000")
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
    print(f"{'backend':<11}{'reviews':>11}{'queue ms':>11}{'answer ms':>11}"
          " (medians)")  # fmt: skip
    results: dict[str, dict[int, tuple[float, float]]] = {}
    for backend in backends:
        with ExitStack() as stack:
            engines = {}
            for size in sizes:
                if backend == "sqlite":
                    folder = Path(stack.enter_context(tempfile.TemporaryDirectory()))
                    url = f"sqlite:///{folder / 'bench.sqlite3'}"
                else:
                    url = stack.enter_context(Postgres(args.postgres_url))
                engine, seeding = prepare(url, size, args.learners)
                stack.callback(engine.dispose)
                engines[size] = engine
                print(f"{backend:<11}{size:>11,} reviews written in {seeding:.1f} s "
                      f"({size / seeding:,.0f} a second)", flush=True)  # fmt: skip
            # The sizes take turns, a few runs at a time, so a machine whose
            # load drifts during the bench weighs on every size alike.
            times = {size: ([], []) for size in sizes}
            for round_number in range(ROUNDS):
                per_round = max(1, args.runs // ROUNDS)
                for size, engine in engines.items():
                    queue_ms, answer_ms = measure(
                        engine, per_round, first=round_number * per_round
                    )
                    times[size][0].extend(queue_ms)
                    times[size][1].extend(answer_ms)
            for size in sizes:
                queue_ms = statistics.median(times[size][0])
                answer_ms = statistics.median(times[size][1])
                results.setdefault(backend, {})[size] = (queue_ms, answer_ms)
                print(f"{backend:<11}{size:>11,}{queue_ms:>11.2f}{answer_ms:>11.2f}",
                      flush=True)  # fmt: skip
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
