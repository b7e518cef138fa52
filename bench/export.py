"""How fast, and in how little memory, does a class's reviews export run?

Builds a fresh SQLite database: migrated, the question bank synced, 1,000
learners sharing N reviews (the bulk seeder, `quizsvc demo-data`), all in one
class with student numbers and names. Then it times:

- the baseline: `sqlite3 -csv` dumping the same rows (the export's own SELECT,
  its joins and order) from the same database (Python's sqlite3 module and csv
  writer instead when the sqlite3 program is not installed; the output says so);
- `quizsvc export reviews --class ID --format csv` and `--format xlsx`, each in
  a child process (start-up included), with the child's CPU time and peak
  resident memory from wait4(): through the SQLite fast path (the rows
  finished by the SELECT, quizsvc.exports.sqlite_fast) and through the
  generic path (the same command with that hook switched off: typed rows and
  the Python writers, as on PostgreSQL).

Targets: each export within 3x the baseline's wall time, under 200 MB. On a
shared machine wall times swing with the load, so the CPU-time ratios are
printed too. The last three lines read `csv ratio: N.Nx`, `xlsx ratio: N.Nx`,
`peak rss: N MB`, for the path the export takes (the fast one).

Run: .venv/bin/python bench/export.py [--reviews 1000000] [--learners 1000]
     [--paths fast,generic] [--keep FILE | --database FILE]
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

# The repository root, and not bench/ itself: bench/queue.py would shadow the
# standard library's queue module (psycopg imports it).
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]
sys.path.insert(0, str(_HERE.parent))

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
JOINED = datetime(2016, 1, 1, tzinfo=UTC)
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
              # Joined before any seeded answer: teachers see answers from
              # joining on (services.sharing), and the bench times them all.
              "joined_at": JOINED} for n, user_id in enumerate(ids, 1)],
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


def run_baseline(database: Path, sql: str, output: Path) -> tuple[float, float, str]:
    """Dump the rows as CSV; return the wall time, the CPU time and what did it."""
    program = shutil.which("sqlite3")
    if program:
        command = [program, "-csv", "-header", str(database), sql]
        with output.open("wb") as target:
            started = time.perf_counter()
            child = subprocess.Popen(command, stdout=target)
            _pid, status, usage = os.wait4(child.pid, 0)
            elapsed = time.perf_counter() - started
        if os.waitstatus_to_exitcode(status):
            raise SystemExit("sqlite3 -csv failed")
        return elapsed, usage.ru_utime + usage.ru_stime, "sqlite3 -csv"
    started, cpu = time.perf_counter(), time.process_time()
    connection = sqlite3.connect(database)
    with output.open("w", newline="", encoding="utf-8") as target:
        writer = csv.writer(target)
        cursor = connection.execute(sql)
        writer.writerow(d[0] for d in cursor.description)
        writer.writerows(cursor)
    connection.close()
    return (
        time.perf_counter() - started,
        time.process_time() - cpu,
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
# `quizsvc` itself, or with the fast path's hook switched off first.
ENTRY = {
    "fast": ["-m", "quizsvc"],
    "generic": [
        "-c",
        "import quizsvc.exports.sqlite_fast as fast; "
        "fast.review_records = lambda *args: None; "
        "from quizsvc.cli import main; main()",
    ],
}


def run_export(
    database: Path,
    instance: Path,
    class_id: int,
    file_format: str,
    output: Path,
    path: str,
) -> tuple[float, float, float]:
    """Run `quizsvc export` in a child; return wall time, peak RSS (MB), CPU time."""
    env = dict(
        os.environ,
        QUIZSVC_DATABASE_URL=f"sqlite:///{database}",
        QUIZSVC_INSTANCE_PATH=str(instance),
        PYTHONPATH=str(Path(__file__).resolve().parent.parent),
    )
    command = [
        sys.executable, *ENTRY[path], "export", "reviews", "--class",
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


def load_average() -> str:
    """The 1-, 5- and 15-minute load averages, as uptime prints them."""
    return ", ".join(f"{value:.2f}" for value in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reviews", type=int, default=1_000_000)
    parser.add_argument("--learners", type=int, default=1_000)
    parser.add_argument(
        "--paths",
        default="fast,generic",
        help="Which export paths to time, comma-separated: fast, generic.",
    )
    parser.add_argument("--keep", type=Path, help="Also copy the database here.")
    parser.add_argument(
        "--database",
        type=Path,
        help="Time a database kept before (--keep) instead of seeding one.",
    )
    args = parser.parse_args()
    paths = [path for path in args.paths.split(",") if path]
    if not paths or set(paths) - set(ENTRY):
        parser.error(f"--paths: choose from {', '.join(ENTRY)}")
    with tempfile.TemporaryDirectory(prefix="quizsvc-bench-export-") as folder:
        folder = Path(folder)
        database = folder / "quizsvc.sqlite3"
        if args.database:
            shutil.copyfile(args.database, database)
            class_id = existing_class(database)
        else:
            class_id = build(database, args.reviews, args.learners)
        if args.keep:
            shutil.copyfile(database, args.keep)
        print(f"load average before: {load_average()}")
        sql = baseline_sql(class_id)
        baseline, baseline_cpu, how = run_baseline(database, sql, folder / "b.csv")
        with (folder / "b.csv").open("rb") as dump:
            rows = sum(1 for _ in dump) - 1
        print(
            f"baseline ({how}): {rows:,} rows in {baseline:.2f} s "
            f"({baseline_cpu:.2f} s CPU)"
        )
        ratios, peak = {}, 0.0
        for path in paths:
            for file_format in ("csv", "xlsx"):
                output = folder / f"export-{path}.{file_format}"
                elapsed, rss, cpu = run_export(
                    database, folder, class_id, file_format, output, path
                )
                size = output.stat().st_size / 1e6
                print(
                    f"{path} {file_format}: {elapsed:.2f} s ({cpu:.2f} s CPU), "
                    f"peak RSS {rss:.0f} MB, {size:.0f} MB file; "
                    f"wall {elapsed / baseline:.1f}x, CPU {cpu / baseline_cpu:.1f}x"
                    f" the baseline's (load {load_average()})"
                )
                ratios[path, file_format] = elapsed / baseline
                if path == paths[0]:
                    peak = max(peak, rss)
        print(f"targets: ratio <= {TARGET_RATIO:.0f}x, peak RSS < {TARGET_RSS_MB} MB")
        print(f"csv ratio: {ratios[paths[0], 'csv']:.1f}x")
        print(f"xlsx ratio: {ratios[paths[0], 'xlsx']:.1f}x")
        print(f"peak rss: {peak:.0f} MB")


def existing_class(database: Path) -> int:
    """The bench class of a database seeded before."""
    connection = sqlite3.connect(database)
    try:
        (class_id,) = connection.execute(
            "SELECT id FROM classes WHERE join_code = 'BENCH234'"
        ).fetchone()
    finally:
        connection.close()
    return class_id


if __name__ == "__main__":
    main()
