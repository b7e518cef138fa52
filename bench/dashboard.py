"""Do the class dashboard's pages stay fast for a big class?

Builds a fresh SQLite database: migrated, the question bank synced, N demo
learners sharing M reviews (the bulk seeder behind `quizsvc demo-data`), all
of them learners of one class with student numbers, some with self-ratings,
misconceptions and explanations. Then it signs in as the class's teacher and
renders every dashboard page through the test client, printing each page's
median time over a few runs and the number of SQL statements it ran (the same
for any class size when the queries are set-based). Target: well under 1 s
per page at 200 learners × 100,000 reviews.

Run: .venv/bin/python bench/dashboard.py [--learners 200] [--reviews 100000]
     [--runs 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

# The repository root, and not bench/ itself: bench/queue.py would shadow the
# standard library's queue module (psycopg imports it).
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]
sys.path.insert(0, str(_HERE.parent))

import numpy as np  # noqa: E402
from sqlalchemy import bindparam, event, insert, select, update  # noqa: E402
from sqlalchemy.orm import Session  # noqa: E402

from quizsvc import create_app  # noqa: E402
from quizsvc.bank import load  # noqa: E402
from quizsvc.db import get_engine, make_engine, upgrade  # noqa: E402
from quizsvc.models import (  # noqa: E402
    Explanation,
    Membership,
    Review,
    SelfAssessment,
    Skill,
    User,
)
from quizsvc.services.accounts import hash_password  # noqa: E402
from quizsvc.services.bank_sync import sync_bank  # noqa: E402
from quizsvc.services.classes import create_class  # noqa: E402
from quizsvc.services.demo import seed_demo_data  # noqa: E402
from quizsvc.services.users import create_user  # noqa: E402

TARGET_SECONDS = 1.0
PASSWORD = "bench password"
MISCONCEPTIONS = ("no_scale", "scale_by_d", "no_softmax", "transposed", "mask_ignored")


def build(path: Path, learners: int, reviews: int) -> tuple[int, int]:
    """Seed the database; return the class id and one learner's id."""
    engine = make_engine(f"sqlite:///{path}")
    upgrade(engine)
    with Session(engine) as session:
        sync_bank(session, load())
        session.commit()
    started = time.perf_counter()
    seed_demo_data(engine, learners=learners, reviews=reviews, prefix="bench")
    print(f"seeded {learners} learners and {reviews:,} reviews in "
          f"{time.perf_counter() - started:.1f} s")  # fmt: skip
    rng = np.random.default_rng(0)
    now = datetime.now(UTC)
    with Session(engine) as session:
        teacher = create_user(
            session, "teacher", role="teacher", password_hash=hash_password(PASSWORD)
        )
        classroom = create_class(session, teacher, "Bench class")
        ids = session.scalars(
            select(User.id).where(User.username.like("bench-%")).order_by(User.id)
        ).all()
        session.execute(
            insert(Membership),
            [
                {"class_id": classroom.id, "user_id": user_id, "role": "learner",
                 "student_number": f"2026{n:04d}", "joined_at": now}
                for n, user_id in enumerate(ids)
            ],
        )  # fmt: skip
        skills = session.scalars(select(Skill.id)).all()
        session.execute(
            insert(SelfAssessment),
            [
                {"user_id": user_id, "skill_id": skill, "assessed_at": now,
                 "level": int(rng.integers(0, 4))}
                for user_id in ids for skill in skills if rng.random() < 0.5
            ],
        )  # fmt: skip
        # The seeder writes no misconceptions or explanations: name one on
        # about a third of the wrong answers and explain some of those.
        wrong = session.scalars(
            select(Review.id).where(Review.correct.is_(False))
        ).all()
        named = [r for r in wrong if rng.random() < 0.35]
        reviews_table = Review.__table__
        if named:
            session.connection().execute(
                update(reviews_table)
                .where(reviews_table.c.id == bindparam("review_id"))
                .values(
                    misconception=bindparam("name"),
                    answer_text="[1 0; 0 1]",
                    problem_kind="scores",
                    problem_level=1,
                    problem_seed=bindparam("review_id"),
                ),
                [
                    {"review_id": r, "name": MISCONCEPTIONS[r % len(MISCONCEPTIONS)]}
                    for r in named
                ],
            )
            owners = dict(
                session.execute(
                    select(Review.id, Review.user_id).where(Review.id.in_(named))
                ).all()
            )
            session.execute(
                insert(Explanation),
                [
                    {"review_id": r, "user_id": owners[r], "body": "我忘了除以 √d。",
                     "created_at": now, "updated_at": now}
                    for r in named[::3]
                ],
            )  # fmt: skip
        session.commit()
        return classroom.id, ids[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--learners", type=int, default=200)
    parser.add_argument("--reviews", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "bench.sqlite3"
        class_id, learner_id = build(path, args.learners, args.reviews)
        app = create_app(
            {
                "TESTING": True,
                "SECRET_KEY": "bench",
                "DATABASE_URL": f"sqlite:///{path}",
            }
        )
        client = app.test_client()
        signed_in = client.post(
            "/api/v1/auth/login", json={"username": "teacher", "password": PASSWORD}
        )
        assert signed_in.status_code == 200, signed_in.json
        statements: list[int] = []
        event.listen(
            get_engine(app), "before_cursor_execute", lambda *a: statements.append(1)
        )
        base = f"/teacher/classes/{class_id}"
        pages = [
            ("class list", "/teacher/"),
            ("overview", base),
            (
                "overview, sorted, dated",
                f"{base}?sort=recall&order=desc&from=2026-01-01",
            ),
            ("misconceptions", f"{base}/misconceptions"),
            ("items", f"{base}/items"),
            ("explanations", f"{base}/explanations"),
            ("calibration", f"{base}/calibration"),
            ("learner", f"{base}/learners/{learner_id}"),
            ("settings", f"{base}/settings"),
            ("API learners", f"/api/v1/classes/{class_id}/learners"),
        ]
        print(
            f"{args.learners} learners, {args.reviews:,} reviews, SQLite; "
            f"median of {args.runs} runs (target < {TARGET_SECONDS:.1f} s)"
        )
        worst = 0.0
        for name, url in pages:
            client.get(url)  # warm caches
            times, cpu = [], []
            for _ in range(args.runs):
                statements.clear()
                started, started_cpu = time.perf_counter(), time.process_time()
                response = client.get(url)
                times.append(time.perf_counter() - started)
                cpu.append(time.process_time() - started_cpu)
                assert response.status_code == 200, (url, response.status_code)
            median = statistics.median(times)
            worst = max(worst, median)
            cpu_ms = statistics.median(cpu) * 1000
            print(
                f"{name:<24} {median * 1000:7.1f} ms  (CPU {cpu_ms:6.1f} ms)  "
                f"{len(statements):3d} queries  {len(response.data) / 1024:6.1f} KiB"
            )
        verdict = "met" if worst < TARGET_SECONDS else "NOT met"
        load = os.getloadavg()[0]
        print(f"slowest page: {worst * 1000:.0f} ms (target < 1 s: {verdict}); "
              f"load average {load:.1f} on {os.cpu_count()} CPUs")  # fmt: skip
        get_engine(app).dispose()


if __name__ == "__main__":
    main()
