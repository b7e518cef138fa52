"""How many drill cycles per second does `quizsvc serve` sustain, beside a fair floor?

N simulated learners (threads, each with its own HTTP connection and API token)
run the real drill cycle against `quizsvc serve` with its default settings:
GET /api/v1/drill/next (skipped when the last answer carried the next item in
its `next`), POST /api/v1/drill/answer (right about four times in five, as a
learner who studied), and POST /api/v1/drill/explanation after a wrong answer.
A learner whose day is done moves on to a fresh account. The accounts and
their tokens are provisioned before the clock starts, as a school would (so
the login limit plays no part). Computing an answer is the learner's own work:
it is timed apart, left out of the latencies and the rate, and reported.

Then the same threads drive the floor: a minimal Flask app served by the same
gunicorn settings (quizsvc.server.gunicorn_options), on the same kind of
database with the same engine set-up (quizsvc.db.make_engine: SQLite's WAL,
writer gate and synchronous level; PostgreSQL's durable commits). A floor
cycle is two requests, the least a drill can do per item: GET authenticates a
bearer token (one indexed lookup of its SHA-256) and reads the learner's card
row; POST authenticates the same way and runs one transaction that inserts a
review-sized row and updates the card row.

It prints cycles per second, p50/p95/p99 latency of a cycle and the error count
(any 5xx, or any status the cycle did not expect) for both, the SQL statements
of each drill request (run in-process on a fresh learner), and as its last line
the ratio drill/floor of cycles per second: `ratio: N.NN` (target: at least 0.5).

PostgreSQL runs in a private schema of QUIZSVC_TEST_POSTGRES_URL (or
--postgres-url), dropped afterwards.

Both servers run side by side and take turns (--rounds, a few seconds each),
so load that drifts on a shared machine weighs on the drill and the floor alike.

Run: .venv/bin/python bench/load.py [--backend sqlite|postgresql] [--seconds 20]
     [--rounds 4] [--learners 8] [--workers 2] [--synchronous FULL|NORMAL]
"""

from __future__ import annotations

import argparse
import logging
import os
import random
import re
import secrets
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import httpx

HERE = Path(__file__).resolve()
# bench/queue.py would shadow the standard library's `queue` (gunicorn needs it).
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE.parent]
sys.path.insert(0, str(HERE.parents[1]))

RIGHT_SHARE = 0.8
ACCOUNTS_PER_LEARNER = 4


# --- servers -------------------------------------------------------------------------


@contextmanager
def served(command: list[str], env: dict[str, str], log: Path):
    """Run a server that announces "open URL" and yield that URL."""
    with open(log, "w") as out:
        process = subprocess.Popen(
            command, stdout=out, stderr=subprocess.STDOUT, text=True, env=env
        )
    try:
        deadline = time.monotonic() + 90
        while True:
            match = re.search(r"open (http://\S+/)", log.read_text())
            if match:
                break
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the server did not start:\n{log.read_text()}")
            time.sleep(0.1)
        yield match.group(1)
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def server_env(instance: Path, database_url: str | None, synchronous: str) -> dict:
    """The environment of a server: its own instance folder, the database given."""
    env = {
        **os.environ,
        "QUIZSVC_INSTANCE_PATH": str(instance),
        "QUIZSVC_SQLITE_SYNCHRONOUS": synchronous,
        "PYTHONUNBUFFERED": "1",
    }
    env.pop("QUIZSVC_DATABASE_URL", None)
    if database_url:
        env["QUIZSVC_DATABASE_URL"] = database_url
    return env


def quizsvc_command(workers: int) -> list[str]:
    return [
        sys.executable,
        "-m",
        "quizsvc",
        "serve",
        "--port",
        "0",
        "--workers",
        str(workers),
    ]


# --- the floor -----------------------------------------------------------------------

# The floor's own tables: a token table like api_tokens (only the SHA-256 of a
# secret stored, a unique index on it), a card row and a review log per learner.
_FLOOR_OWNER = (
    "SELECT floor_users.id, floor_users.username FROM floor_users "
    "JOIN floor_tokens ON floor_tokens.user_id = floor_users.id "
    "WHERE floor_tokens.token_hash = :token_hash AND floor_tokens.revoked_at IS NULL"
)
_FLOOR_CARD = (
    "SELECT id, user_id, state, stability, difficulty, due, last_review, reps "
    "FROM floor_cards WHERE user_id = :user"
)
_FLOOR_UPDATE = (
    "UPDATE floor_cards SET state = 2, stability = stability + 1.5, "
    "difficulty = 5.1, due = CURRENT_TIMESTAMP, reps = reps + 1, "
    "last_review = CURRENT_TIMESTAMP WHERE user_id = :user"
)
_FLOOR_INSERT = (
    "INSERT INTO floor_reviews (card_id, reviewed_at, rating, correct, score, "
    "duration_ms, answer_text, state_after, stability_after, difficulty_after, "
    "due_after) VALUES (:card, CURRENT_TIMESTAMP, 3, true, 1.0, 5000, "
    "'[[0.7071, 0]]', 2, 3.2, 5.1, CURRENT_TIMESTAMP)"
)


def floor_app():
    """Two routes, the least a drill can do per item.

    GET /card authenticates the bearer token (one indexed lookup of its hash)
    and reads the learner's card row, in a read-only transaction (on SQLite a
    deferred one, as quizsvc's read phase); POST /card authenticates the same
    way and runs one durable transaction that inserts a review-sized row and
    updates the card row. Same engine set-up as quizsvc (quizsvc.db.make_engine:
    WAL, the writer gate, BEGIN IMMEDIATE, synchronous as configured).
    """
    import hashlib

    from flask import Flask, request
    from sqlalchemy import text

    from quizsvc.db import make_engine
    from quizsvc.db.transactions import READ_ONLY_OPTION

    app = Flask(__name__)
    engine = make_engine(
        os.environ["FLOOR_DATABASE_URL"],
        sqlite_synchronous=os.environ.get("QUIZSVC_SQLITE_SYNCHRONOUS", "FULL"),
    )
    owner, card, update, insert = (
        text(_FLOOR_OWNER), text(_FLOOR_CARD), text(_FLOOR_UPDATE), text(_FLOOR_INSERT)
    )  # fmt: skip

    def digest() -> str | None:
        scheme, _, secret = request.headers.get("Authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not secret:
            return None
        return hashlib.sha256(secret.strip().encode()).hexdigest()

    @app.get("/card")
    def read_card():
        token_hash = digest()
        with engine.connect() as connection:
            connection.execution_options(**{READ_ONLY_OPTION: True})
            with connection.begin():
                user = connection.execute(owner, {"token_hash": token_hash}).first()
                if user is None:
                    return {"error": "unauthorized"}, 401
                row = connection.execute(card, {"user": user.id}).mappings().one()
        return {key: str(value) for key, value in row.items()}

    @app.post("/card")
    def answer_card():
        token_hash = digest()
        with engine.begin() as connection:
            user = connection.execute(owner, {"token_hash": token_hash}).first()
            if user is None:
                return {"error": "unauthorized"}, 401
            card_id = connection.execute(update, {"user": user.id}).rowcount and user.id
            connection.execute(insert, {"card": card_id})
        return {"ok": True}, 201

    return app


def prepare_floor(database_url: str, learners: int) -> list[str]:
    """Create the floor's tables and one learner (token, card) per thread."""
    import hashlib

    from sqlalchemy import text

    from quizsvc.db import make_engine

    engine = make_engine(database_url)
    key = (
        "INTEGER PRIMARY KEY"
        if engine.dialect.name == "sqlite"
        else "SERIAL PRIMARY KEY"
    )
    stamp = "TIMESTAMP WITH TIME ZONE"
    statements = [
        f"CREATE TABLE floor_users (id {key}, username VARCHAR(64) UNIQUE)",
        f"CREATE TABLE floor_tokens (id {key}, user_id INTEGER REFERENCES "
        "floor_users(id), token_hash VARCHAR(128) UNIQUE, revoked_at "
        f"{stamp})",
        f"CREATE TABLE floor_cards (id {key}, user_id INTEGER REFERENCES "
        f"floor_users(id), state SMALLINT, stability FLOAT, difficulty FLOAT, "
        f"due {stamp}, last_review {stamp}, reps INTEGER)",
        "CREATE UNIQUE INDEX floor_cards_user ON floor_cards (user_id)",
        f"CREATE TABLE floor_reviews (id {key}, card_id INTEGER "
        "REFERENCES floor_cards(id), "
        f"reviewed_at {stamp}, rating SMALLINT, correct BOOLEAN, score FLOAT, "
        "duration_ms INTEGER, answer_text TEXT, state_after SMALLINT, "
        f"stability_after FLOAT, difficulty_after FLOAT, due_after {stamp})",
    ]
    tokens = []
    with engine.begin() as connection:
        for statement in statements:
            connection.execute(text(statement))
        for learner in range(1, learners + 1):
            secret = secrets.token_urlsafe(24)
            connection.execute(
                text("INSERT INTO floor_users (id, username) VALUES (:id, :name)"),
                {"id": learner, "name": f"floor{learner}"},
            )
            connection.execute(
                text(
                    "INSERT INTO floor_tokens (user_id, token_hash) VALUES (:id, :hash)"
                ),
                {"id": learner, "hash": hashlib.sha256(secret.encode()).hexdigest()},
            )
            connection.execute(
                text(
                    "INSERT INTO floor_cards (id, user_id, state, stability, reps) "
                    "VALUES (:id, :id, 0, 0, 0)"
                ),
                {"id": learner},
            )
            tokens.append(secret)
    engine.dispose()
    return tokens


def serve_floor(workers: int, instance: str) -> None:
    """Serve the floor app with the gunicorn settings of `quizsvc serve`."""
    from quizsvc.server import QuizsvcServer, gunicorn_options

    class FloorServer(QuizsvcServer):
        def flask_app(self):
            return floor_app()

    FloorServer(
        gunicorn_options(
            host="127.0.0.1", port=0, workers=workers, instance_path=instance
        )
    ).run()


# --- learners ------------------------------------------------------------------------


def provision(database_url: str, count: int) -> list[str]:
    """Create learners with generous daily limits; return their API tokens."""
    return [token for token, _user_id in provision_learners(database_url, count)]


def provision_learners(database_url: str, count: int) -> list[tuple[str, int]]:
    """Create learners with generous daily limits; return (API token, user id)."""
    from sqlalchemy.orm import Session

    from quizsvc.db import make_engine
    from quizsvc.services.accounts import issue_token
    from quizsvc.services.settings import update_settings
    from quizsvc.services.users import create_user

    engine = make_engine(database_url)
    tokens = []
    with Session(engine) as session:
        for number in range(count):
            user = create_user(
                session, f"load{number}-{secrets.token_hex(3)}", locale="en"
            )
            update_settings(session, user, new_per_day=1000, reviews_per_day=10000)
            tokens.append((issue_token(session, user, "load").secret, user.id))
        session.commit()
    engine.dispose()
    return tokens


class Seeds:
    """The seed of a learner's open generated problem, read from the database.

    The API keeps the seed to itself (it would name the answer), so the bench
    looks it up, as a learner works the problem out by hand: one primary-key
    read on its own connection, outside the server's transactions.
    """

    def __init__(self, database_url: str):
        from sqlalchemy import create_engine, text

        # A plain engine: quizsvc's would BEGIN IMMEDIATE and take SQLite's
        # write lock for a read.
        self.engine = create_engine(database_url)
        self.query = text("SELECT problem_seed FROM open_items WHERE user_id = :user")

    def __call__(self, user_id: int) -> int:
        with self.engine.connect() as connection:
            return int(connection.execute(self.query, {"user": user_id}).scalar_one())


def answer_for(
    item: dict[str, Any], right: bool, seed_of: Any = None
) -> dict[str, Any]:
    """An answer body to an open item: right (from the bank) or plausibly wrong."""
    from quizsvc import bank, problems

    question = _bank().questions[item["item_id"]]
    data = question.data
    body: dict[str, Any] = {"item_id": item["item_id"]}
    kind = question.type
    if kind == "recall":
        body["rating"] = "good" if right else "again"
    elif kind == "choice":
        options = [o["id"] for o in data["options"]]
        correct = [o["id"] for o in data["options"] if o.get("correct")]
        wrong = [o for o in options if o not in correct][:1] or options[:1]
        body["answer"] = ",".join(correct if right else wrong)
    elif kind == "numeric":
        body["answer"] = (
            bank.format_answer(data["answer"], data.get("tolerance", 1e-4))
            if right
            else "12345"
        )
    elif kind == "cloze":
        body["answer"] = data["accepted"][0] if right else "no idea"
    elif kind == "ordering":
        steps = [s["id"] for s in data["steps"]]
        body["answer"] = steps if right else steps[::-1]
    else:
        problem_ref = item["problem"]
        # The API keeps the seed to itself; older servers showed it.
        seed = problem_ref["seed"] if "seed" in problem_ref else seed_of()
        problem = problems.generate(problem_ref["kind"], seed, problem_ref["level"])
        answers = {a.name: problem.answer_json(a.name) for a in problem.ask}
        first = problem.ask[0]
        if not right and first.format == "matrix":
            rows, cols = first.shape
            answers[first.name] = [[9] * cols for _ in range(rows)]
        body["answer"] = answers
    return body


_BANK = None


def _bank():
    global _BANK
    if _BANK is None:
        from quizsvc import bank

        _BANK = bank.load()
    return _BANK


class Tally:
    """Cycle latencies, errors and the learners' own work, shared by the threads."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.latencies: list[float] = []
        self.errors: list[str] = []
        # Seconds each learner thread spent computing answers (its own work,
        # kept out of the cycles' latencies and of the rate).
        self.client_seconds: dict[int, float] = {}
        self.cycles_by_thread: dict[int, int] = {}

    def cycle(self, seconds: float, learner: int = 0) -> None:
        with self.lock:
            self.latencies.append(seconds)
            self.cycles_by_thread[learner] = self.cycles_by_thread.get(learner, 0) + 1

    def client_work(self, seconds: float, learner: int) -> None:
        with self.lock:
            self.client_seconds[learner] = (
                self.client_seconds.get(learner, 0.0) + seconds
            )

    def error(self, what: str) -> None:
        with self.lock:
            self.errors.append(what)

    def rate(self, elapsed: float) -> float:
        """Cycles per second of the time the learners waited on the server.

        Each thread's cycles count over its window less its own work, so the
        time spent computing answers (which the floor does not have) is not
        charged to the server.
        """
        return sum(
            cycles / max(elapsed - self.client_seconds.get(learner, 0.0), 1e-9)
            for learner, cycles in self.cycles_by_thread.items()
        )


class DrillLearner:
    """One simulated learner's place, kept from one round of the bench to the next."""

    def __init__(self, tokens: list[tuple[str, int]], learner: int):
        self.accounts = iter(tokens)
        self.account: tuple[str, int] | None = next(self.accounts)
        self.item: dict[str, Any] | None = None
        self.rng = random.Random(learner)
        self.learner = learner


def drill_learner(
    url: str, state: DrillLearner, seeds: Seeds, until: float, tally: Tally
) -> None:
    """Run drill cycles until the deadline, moving to a fresh account when done.

    A cycle is one item: drill/next unless the last answer carried the next
    item (`next` in its body), drill/answer, and drill/explanation after a
    wrong answer. Computing the answer is the learner's own work: timed apart.
    """
    if state.account is None:
        return
    rng, learner, accounts = state.rng, state.learner, state.accounts
    with httpx.Client(base_url=url + "api/v1", timeout=30) as client:
        token, user_id = state.account
        client.headers["Authorization"] = f"Bearer {token}"
        item = state.item
        while time.monotonic() < until:
            waited = 0.0
            if item is None:
                started = time.perf_counter()
                step = client.get("/drill/next")
                waited += time.perf_counter() - started
                if step.status_code == 409:
                    body = step.json()
                    review_id = int(re.search(r"review_id (\d+)", body["message"])[1])
                    _explain(client, review_id, tally)
                    continue
                if step.status_code != 200:
                    tally.error(f"next {step.status_code}")
                    continue
                item = step.json()
            if item.get("done"):
                item = None
                state.account = next(accounts, None)
                if state.account is None:
                    break
                token, user_id = state.account
                client.headers["Authorization"] = f"Bearer {token}"
                continue
            own = time.perf_counter()
            body = answer_for(
                item, rng.random() < RIGHT_SHARE, lambda user=user_id: seeds(user)
            )
            body.update(
                duration_ms=rng.randint(3000, 30000),
                idempotency_key=secrets.token_hex(8),
            )
            tally.client_work(time.perf_counter() - own, learner)
            started = time.perf_counter()
            answered = client.post("/drill/answer", json=body)
            item = None
            if answered.status_code != 201:
                tally.error(f"answer {answered.status_code} {answered.text[:120]}")
                continue
            result = answered.json()
            if result["requires_explanation"]:
                explained = _explain(client, result["review_id"], tally)
                item = (explained or {}).get("next")
            else:
                item = result.get("next")
            tally.cycle(waited + time.perf_counter() - started, learner)
        state.item = item


def _explain(client: httpx.Client, review_id: int, tally: Tally) -> dict | None:
    explained = client.post(
        "/drill/explanation",
        json={"review_id": review_id, "text": "I mixed up the rows and columns."},
    )
    if explained.status_code != 201:
        tally.error(f"explanation {explained.status_code}")
        return None
    return explained.json()


def floor_learner(url: str, token: str, until: float, tally: Tally) -> None:
    """Run floor cycles: GET the card, POST the answer (one of each)."""
    with httpx.Client(base_url=url, timeout=30) as client:
        client.headers["Authorization"] = f"Bearer {token}"
        while time.monotonic() < until:
            started = time.perf_counter()
            read = client.get("card")
            if read.status_code != 200:
                tally.error(f"floor GET {read.status_code}")
                continue
            written = client.post("card")
            if written.status_code != 201:
                tally.error(f"floor POST {written.status_code}")
                continue
            tally.cycle(time.perf_counter() - started, hash(token))


def drive(target, arguments_of, learners: int, seconds: float, tally: Tally) -> float:
    """Run the learners' threads for `seconds`, into `tally`; return the time."""
    start = time.monotonic()
    until = start + seconds
    threads = [
        threading.Thread(target=target, args=(*arguments_of(n), until, tally))
        for n in range(learners)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return time.monotonic() - start


def report(name: str, tally: Tally, elapsed: float) -> float:
    rate = tally.rate(elapsed)
    cuts = (
        statistics.quantiles(tally.latencies, n=100, method="inclusive")
        if len(tally.latencies) > 1
        else [float("nan")] * 99
    )
    print(
        f"{name:6} {rate:8.1f} cycles/s   p50 {cuts[49] * 1000:6.1f} ms   "
        f"p95 {cuts[94] * 1000:6.1f} ms   p99 {cuts[98] * 1000:6.1f} ms   "
        f"errors {len(tally.errors)}"
    )
    for error in sorted(set(tally.errors))[:5]:
        print(f"       e.g. {error}")
    if tally.client_seconds and tally.latencies:
        own = sum(tally.client_seconds.values())
        print(
            f"       the learners' own work (computing answers), not counted: "
            f"{own / len(tally.latencies) * 1000:.2f} ms per cycle; "
            f"wall-clock rate {len(tally.latencies) / elapsed:.1f} cycles/s"
        )
    return rate


# --- statements per request ----------------------------------------------------------


def statements_per_request(database_url: str) -> dict[str, list[str]]:
    """The SQL statements of each drill request, run in-process on a fresh learner."""
    from sqlalchemy import event

    from quizsvc import create_app
    from quizsvc.db import get_engine

    app = create_app({"SECRET_KEY": "bench", "DATABASE_URL": database_url})
    # Its request log would land among the figures.
    logging.getLogger("quizsvc.requests").disabled = True
    (warm, _), (token, user_id) = provision_learners(database_url, 2)
    client = app.test_client()
    # A first request fills the worker's copy of the bank, as a running
    # server's first request does: what follows is the steady state.
    client.get("/api/v1/drill/next", headers={"Authorization": f"Bearer {warm}"})
    headers = {"Authorization": f"Bearer {token}"}
    statements: list[str] = []
    engine = get_engine(app)
    event.listen(engine, "before_cursor_execute", lambda *a: statements.append(a[2]))
    seeds = Seeds(database_url)
    runs: dict[str, list[str]] = {}

    def run(name: str, call) -> Any:
        statements.clear()
        response = call()
        runs[name] = list(statements)
        return response.json

    item = run(
        "drill/next (opening)",
        lambda: client.get("/api/v1/drill/next", headers=headers),
    )
    run(
        "drill/next (item open)",
        lambda: client.get("/api/v1/drill/next", headers=headers),
    )
    for right in (True, False):
        body = {
            **answer_for(item, right, lambda: seeds(user_id)),
            "idempotency_key": f"statements-{right}",
        }
        result = run(
            f"drill/answer ({'right' if right else 'wrong'})",
            lambda body=body: client.post(
                "/api/v1/drill/answer", json=body, headers=headers
            ),
        )
        if "next" in result:
            item = result["next"]
        else:
            item = client.get("/api/v1/drill/next", headers=headers).json
        if item is None or item.get("done"):
            break
    if result.get("requires_explanation"):
        run(
            "drill/explanation",
            lambda: client.post(
                "/api/v1/drill/explanation",
                json={"review_id": result["review_id"], "text": "rows and columns"},
                headers=headers,
            ),
        )
    engine.dispose()
    seeds.engine.dispose()
    return runs


def print_statements(runs: dict[str, list[str]]) -> None:
    """Each drill request's SQL statements, one line each."""
    print(
        "SQL statements per request: "
        + ", ".join(f"{name} {len(found)}" for name, found in runs.items())
    )
    for name, found in runs.items():
        print(f"  {name}:")
        for statement in found:
            line = " ".join(statement.split())
            print(f"    {line[:150]}{' …' if len(line) > 150 else ''}")


# --- main ----------------------------------------------------------------------------


@contextmanager
def database(backend: str, folder: Path, name: str, postgres_url: str | None):
    """A database URL for one server (PostgreSQL: a private schema, dropped after)."""
    if backend == "sqlite":
        yield f"sqlite:///{folder / name}.sqlite3"
        return
    from sqlalchemy import text
    from sqlalchemy.engine import make_url
    from sqlalchemy.pool import NullPool

    from quizsvc.db import make_engine

    if not postgres_url:
        sys.exit("PostgreSQL needs QUIZSVC_TEST_POSTGRES_URL or --postgres-url")
    schema = f"quizsvc_load_{name}_{secrets.token_hex(4)}"
    admin = make_engine(postgres_url, poolclass=NullPool)
    with admin.begin() as connection:
        connection.execute(text(f'CREATE SCHEMA "{schema}"'))
    url = make_url(postgres_url).update_query_dict(
        {"options": f"-csearch_path={schema}"}
    )
    try:
        yield url.render_as_string(hide_password=False)
    finally:
        with admin.begin() as connection:
            connection.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        admin.dispose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--backend", choices=["sqlite", "postgresql"], default="sqlite")
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--learners", type=int, default=8)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument(
        "--synchronous", default="FULL", choices=["OFF", "NORMAL", "FULL", "EXTRA"]
    )
    parser.add_argument(
        "--postgres-url", default=os.environ.get("QUIZSVC_TEST_POSTGRES_URL")
    )
    parser.add_argument("--serve-floor", metavar="INSTANCE", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_floor:
        serve_floor(args.workers, args.serve_floor)
        return
    with tempfile.TemporaryDirectory(prefix="quizsvc-load-") as tmp:
        folder = Path(tmp)
        print(
            f"{args.backend}, {args.learners} learners, {args.seconds:g} s, "
            f"{args.workers} workers, {args.rounds} rounds each"
            + (f", synchronous={args.synchronous}" if args.backend == "sqlite" else "")
        )
        with ExitStack() as stack:
            url = stack.enter_context(
                database(args.backend, folder, "drill", args.postgres_url)
            )
            instance = folder / "drill"
            instance.mkdir()
            env = server_env(instance, url, args.synchronous)
            base = stack.enter_context(
                served(quizsvc_command(args.workers), env, instance / "serve.log")
            )
            tokens = provision_learners(url, args.learners * ACCOUNTS_PER_LEARNER)
            _bank()
            seeds = Seeds(url)
            stack.callback(seeds.engine.dispose)
            learners = [
                DrillLearner(tokens[n :: args.learners], n)
                for n in range(args.learners)
            ]
            floor_url = stack.enter_context(
                database(args.backend, folder, "floor", args.postgres_url)
            )
            floor_instance = folder / "floor"
            floor_instance.mkdir()
            floor_tokens = prepare_floor(floor_url, args.learners)
            floor_env = server_env(floor_instance, None, args.synchronous)
            floor_env["FLOOR_DATABASE_URL"] = floor_url
            command = [
                sys.executable,
                str(HERE),
                "--serve-floor",
                str(floor_instance),
                "--workers",
                str(args.workers),
            ]
            floor_base = stack.enter_context(
                served(command, floor_env, floor_instance / "serve.log")
            )
            # Drill and floor take turns, a few seconds each, so a machine
            # whose load drifts weighs on both alike.
            drill, floor = Tally(), Tally()
            drill_time = floor_time = 0.0
            share = args.seconds / args.rounds
            for _ in range(args.rounds):
                drill_time += drive(
                    drill_learner,
                    lambda n: (base, learners[n], seeds),
                    args.learners,
                    share,
                    drill,
                )
                floor_time += drive(
                    floor_learner,
                    lambda n: (floor_base, floor_tokens[n]),
                    args.learners,
                    share,
                    floor,
                )
            counts = statements_per_request(url)
        drill_rate = report("drill", drill, drill_time)
        floor_rate = report("floor", floor, floor_time)
        print_statements(counts)
        print(f"ratio: {drill_rate / floor_rate:.2f}")


if __name__ == "__main__":
    main()
