"""How fast, and in how little memory, does a class's reviews export run?

Builds a fresh SQLite database: migrated, the question bank synced, 1,000
learners sharing N reviews (the bulk seeder, `quizsvc demo-data`), all in one
class with student numbers and names. Then it times:

- the baseline: `sqlite3 -csv` dumping the same rows (the export's own SELECT,
  its joins and order) from the same database (Python's sqlite3 module and csv
  writer instead when the sqlite3 program is not installed; the output says so);
- `quizsvc export reviews --class ID --format csv` and `--format xlsx`, each in
  a child process (start-up included), with the child's peak resident memory
  from wait4().

Targets: each export within 3x the baseline's wall time, under 200 MB.
The last three lines read `csv ratio: N.Nx`, `xlsx ratio: N.Nx`, `peak rss: N MB`.

Run: .venv/bin/python bench/export.py [--reviews 1000000] [--learners 1000]
"""

from __future__ import annotations

import argparse
import csv
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sqlalchemy import insert, select  # noqa: E402
from sqlalchemy.dialects import sqlite as sqlite_dialect  # noqa: E402
from sqlalchemy.orm import Session  # noqa: E402

from quizsvc.bank import load  # noqa: E402
from quizsvc.db import make_engine, upgrade  # noqa: E402
from quizsvc.exports.queries import class_learners, reviews_query  # noqa: E402
from quizsvc.models import Classroom, Membership, User  # noqa: E402
from quizsvc.services.bank_sync import sync_bank  # noqa: E402
from quizsvc.services.demo import seed_demo_data  # noqa: E402

NOW = datetime(2026, 11, 30, 4, 0, tzinfo=UTC)
TARGET_RATIO = 3.0
TARGET_RSS_MB = 200


def build(path: Path, reviews: int, learners: int) -> int:
    """Fill a database at `path`; return the class id."""
    engine = make_engine(f"sqlite:///{path}")
    upgrade(engine)
    with Session(engine) as session:
        sync_bank(session, load(), now=NOW)
        session.commit()
    started = time.perf_counter()
    seed_demo_data(engine, learners=learners, reviews=reviews, prefix="bench", now=NOW)
    print(f"seeded {reviews:,} reviews in {time.perf_counter() - started:.1f} s")
    with engine.begin() as connection:
        teacher = connection.execute(
            insert(User).values(
                username="bench-teacher", role="teacher", created_at=NOW
            )
        ).inserted_primary_key[0]
        class_id = connection.execute(
            insert(Classroom).values(
                name="基准班", timezone="Asia/Shanghai", join_code="BENCH234",
                joining_open=True, created_by=teacher, created_at=NOW,
            )
        ).inserted_primary_key[0]  # fmt: skip
        ids = connection.scalars(
            select(User.id).where(User.username.like("bench-0%")).order_by(User.id)
        ).all()
        # Two statements: an executemany takes its columns from the first
        # row, so the teacher's row would drop every student number and name.
        connection.execute(
            insert(Membership).values(class_id=class_id, user_id=teacher,
                                      role="teacher", joined_at=NOW)
        )  # fmt: skip
        connection.execute(
            insert(Membership),
            [{"class_id": class_id, "user_id": user_id, "role": "learner",
              "student_number": f"2026{n:05d}", "display_name": f"学生{n}",
              "joined_at": NOW} for n, user_id in enumerate(ids, 1)],
        )  # fmt: skip
    engine.dispose()
    return class_id


def baseline_sql(class_id: int) -> str:
    """The export's SELECT, with its parameters inlined, as SQLite text."""
    classroom = Classroom(id=class_id, timezone="Asia/Shanghai")
    query = reviews_query(class_learners(classroom), (None, None))
    return str(
        query.compile(
            dialect=sqlite_dialect.dialect(), compile_kwargs={"literal_binds": True}
        )
    )


def run_baseline(database: Path, sql: str, output: Path) -> tuple[float, str]:
    """Dump the rows as CSV; return the wall time and what did it."""
    program = shutil.which("sqlite3")
    started = time.perf_counter()
    if program:
        with output.open("wb") as target:
            subprocess.run([program, "-csv", "-header", str(database), sql],
                           stdout=target, check=True)  # fmt: skip
        cpu = os.times()
        return (
            time.perf_counter() - started,
            f"sqlite3 -csv, {cpu.children_user + cpu.children_system:.2f} s CPU",
        )
    connection = sqlite3.connect(database)
    with output.open("w", newline="", encoding="utf-8") as target:
        writer = csv.writer(target)
        cursor = connection.execute(sql)
        writer.writerow(d[0] for d in cursor.description)
        writer.writerows(cursor)
    connection.close()
    return (
        time.perf_counter() - started,
        "Python sqlite3 + csv (the sqlite3 program is not installed)",
    )


# Runs the export and reports its rusage. A child starts as a copy of its
# parent (even with vfork, Linux counts the parent's memory in the child's peak
# RSS), so the export is launched by this small interpreter, not by the bench,
# which holds the seeded data in memory.
LAUNCHER = """
import os, sys, time
started = time.perf_counter()
quiet = [(os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0)]
pid = os.posix_spawn(sys.argv[1], sys.argv[1:], os.environ, file_actions=quiet)
_pid, status, usage = os.wait4(pid, 0)
print(os.waitstatus_to_exitcode(status), time.perf_counter() - started,
      usage.ru_maxrss, usage.ru_utime + usage.ru_stime)
"""


def run_export(
    database: Path, instance: Path, class_id: int, file_format: str, output: Path
) -> tuple[float, float, float]:
    """Run `quizsvc export` in a child; return wall time, peak RSS (MB), CPU time."""
    env = dict(
        os.environ,
        QUIZSVC_DATABASE_URL=f"sqlite:///{database}",
        QUIZSVC_INSTANCE_PATH=str(instance),
        PYTHONPATH=str(Path(__file__).resolve().parent.parent),
    )
    command = [
        sys.executable, "-m", "quizsvc", "export", "reviews", "--class",
        str(class_id), "--format", file_format, "-o", str(output),
    ]  # fmt: skip
    report = subprocess.run(
        [sys.executable, "-c", LAUNCHER, *command],
        env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    code, elapsed, rss_kb, cpu = report.stdout.split()
    if code != "0":
        raise SystemExit(f"quizsvc export failed: {' '.join(command)}")
    # ru_maxrss is in kilobytes on Linux.
    return float(elapsed), int(rss_kb) / 1024, float(cpu)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reviews", type=int, default=1_000_000)
    parser.add_argument("--learners", type=int, default=1_000)
    parser.add_argument("--keep", type=Path, help="Also copy the database here.")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="quizsvc-bench-export-") as folder:
        folder = Path(folder)
        database = folder / "quizsvc.sqlite3"
        class_id = build(database, args.reviews, args.learners)
        if args.keep:
            shutil.copyfile(database, args.keep)
        baseline, how = run_baseline(database, baseline_sql(class_id), folder / "b.csv")
        with (folder / "b.csv").open("rb") as dump:
            rows = sum(1 for _ in dump) - 1
        print(f"baseline ({how}): {rows:,} rows in {baseline:.2f} s")
        ratios, peak = {}, 0.0
        for file_format in ("csv", "xlsx"):
            output = folder / f"export.{file_format}"
            elapsed, rss, cpu = run_export(
                database, folder, class_id, file_format, output
            )
            size = output.stat().st_size / 1e6
            print(
                f"export {file_format}: {elapsed:.2f} s ({cpu:.2f} s CPU), "
                f"peak RSS {rss:.0f} MB, {size:.0f} MB file"
            )
            ratios[file_format] = elapsed / baseline
            peak = max(peak, rss)
        print(f"targets: ratio <= {TARGET_RATIO:.0f}x, peak RSS < {TARGET_RSS_MB} MB")
        print(f"csv ratio: {ratios['csv']:.1f}x")
        print(f"xlsx ratio: {ratios['xlsx']:.1f}x")
        print(f"peak rss: {peak:.0f} MB")


if __name__ == "__main__":
    main()
