"""How long do evaluation and optimisation take for a whole class?

Builds a fresh SQLite database: migrated, the question bank synced, N demo
learners sharing N × M reviews (the bulk seeder behind `quizsvc demo-data`),
all learners of one class since before their first review. Then it times:

1. the rolling evaluation of every learner alone (quizsvc.scheduling.comparison,
   what `quizsvc fsrs evaluate --rolling` runs on one log: 5 seeds, weekly
   refits), per learner and in total;
2. `quizsvc fsrs optimize --all` end to end (the class prior, then every
   learner: reads, rolling evaluation, whole-history fit, write, reschedule),
   with `--min-reviews` set below M so every learner is really fitted.

It prints wall and CPU seconds and the machine's load average, since the
machine these figures come from is shared. Target (issue 25): minutes for
200 learners × 1,000 reviews on 2 cores.

Run: .venv/bin/python bench/optimize.py [--learners 200] [--reviews 1000]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

# The repository, in place of bench/ itself: bench/queue.py would otherwise
# shadow the standard library's queue module.
sys.path[0] = str(Path(__file__).resolve().parent.parent)

from sqlalchemy import insert, select  # noqa: E402
from sqlalchemy.orm import Session  # noqa: E402

from quizsvc import create_app, scheduling  # noqa: E402
from quizsvc.bank import load  # noqa: E402
from quizsvc.cli import main as cli  # noqa: E402
from quizsvc.db import make_engine, upgrade  # noqa: E402
from quizsvc.models import FsrsParameters, Membership, User  # noqa: E402
from quizsvc.scheduling.comparison import compare  # noqa: E402
from quizsvc.services.bank_sync import sync_bank  # noqa: E402
from quizsvc.services.classes import create_class  # noqa: E402
from quizsvc.services.demo import seed_demo_data  # noqa: E402
from quizsvc.services.parameters import learner_histories  # noqa: E402
from quizsvc.services.users import create_user  # noqa: E402


def build(path: Path, learners: int, reviews: int) -> None:
    """Seed the database with one class of learners and their histories."""
    engine = make_engine(f"sqlite:///{path}")
    upgrade(engine)
    with Session(engine) as session:
        sync_bank(session, load())
        session.commit()
    started = time.perf_counter()
    seed_demo_data(
        engine, learners=learners, reviews=learners * reviews, prefix="bench"
    )
    print(
        f"seeded {learners} learners × {reviews} reviews in "
        f"{time.perf_counter() - started:.1f} s"
    )
    with Session(engine) as session:
        teacher = create_user(session, "teacher", role="teacher")
        classroom = create_class(session, teacher, "Bench class")
        ids = session.scalars(
            select(User.id).where(User.username.like("bench-%")).order_by(User.id)
        ).all()
        joined = datetime.now(UTC) - timedelta(days=3650)
        session.execute(
            insert(Membership),
            [
                {"class_id": classroom.id, "user_id": i, "role": "learner",
                 "joined_at": joined}
                for i in ids
            ],
        )  # fmt: skip
        session.commit()
    engine.dispose()


def clocks() -> tuple[float, float]:
    return time.perf_counter(), time.process_time()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--learners", type=int, default=200)
    parser.add_argument("--reviews", type=int, default=1000)
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "bench.sqlite3"
        build(path, args.learners, args.reviews)
        app = create_app({"DATABASE_URL": f"sqlite:///{path}", "SECRET_KEY": "b"})
        engine = make_engine(f"sqlite:///{path}")
        per_learner = []
        wall, cpu = clocks()
        with Session(engine) as session:
            for user in session.scalars(
                select(User).where(User.username.like("bench-%"))
            ):
                started = time.perf_counter()
                compare(learner_histories(session, user), split="rolling")
                per_learner.append(time.perf_counter() - started)
        wall_end, cpu_end = clocks()
        print(
            f"rolling evaluation, {len(per_learner)} learners: "
            f"{wall_end - wall:.1f} s wall, {cpu_end - cpu:.1f} s CPU; per learner "
            f"median {statistics.median(per_learner):.2f} s, "
            f"max {max(per_learner):.2f} s"
        )
        wall, cpu = clocks()
        result = app.test_cli_runner().invoke(
            cli,
            [
                "fsrs", "optimize", "--all",
                "--min-reviews", str(max(1, args.reviews // 2)),
            ],
        )  # fmt: skip
        wall_end, cpu_end = clocks()
        if result.exit_code != 0:
            print(result.output, result.exception)
            raise SystemExit(1)
        with Session(engine) as session:
            attempts = session.scalars(select(FsrsParameters.adopted)).all()
        print(
            f"fsrs optimize --all: {wall_end - wall:.1f} s wall, "
            f"{cpu_end - cpu:.1f} s CPU; {len(attempts)} learners fitted, "
            f"{sum(attempts)} adopted"
        )
        print(result.output.splitlines()[0])
        engine.dispose()
    print(f"load average after: {os.getloadavg()[0]:.1f}")
    print(f"minimum history for optimize: {scheduling.MIN_REVIEWS_TO_OPTIMIZE}")


if __name__ == "__main__":
    main()
