"""Where does a drill cycle's time go? A per-layer profile inside one process.

Runs drill cycles (drill/next when the answer did not carry the next item,
drill/answer, drill/explanation after a wrong answer) through the Flask app
in-process (Werkzeug's test client: no sockets, no gunicorn) under cProfile,
for a few learners on a fresh SQLite or PostgreSQL database, and splits the
profiled time by layer, by the file each function lives in (self time, so a
function's time counts once, in the layer that spent it):

  HTTP       Flask, Werkzeug, Flask-Login, quizsvc/http, quizsvc/api, the app
  auth       quizsvc/services/accounts.py, hashlib
  queue      quizsvc/services/queue.py, the queue policy in scheduling.py
  generation quizsvc/problems
  grading    quizsvc/grading.py, quizsvc/bank (answer checks)
  FSRS       fsrs_rs_python, scheduling.py's memory-state code
  SQL        SQLAlchemy, the driver (sqlite3, psycopg)
  commit     the driver's commit (for a durable one, the wait for the disk)
  JSON       json, Flask's JSON provider
  drill      quizsvc/services (drill, reviews, settings, ...) and models
  other      everything else (the bench's own answer computing is left out)

It prints cycles per second of the one process, the milliseconds per cycle of
each layer, and with --top N the N functions with the most self time.

Run: .venv/bin/python bench/drill_profile.py [--backend sqlite|postgresql]
     [--cycles 300] [--top 25]
"""

from __future__ import annotations

import argparse
import cProfile
import logging
import os
import pstats
import random
import re
import secrets
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve()
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE.parent]
sys.path.insert(0, str(HERE.parents[1]))
sys.path.insert(1, str(HERE.parent))

import load  # noqa: E402  (bench/load.py: accounts, answers, databases)

LAYERS = (
    ("auth", ("quizsvc/services/accounts.py", "hashlib", "_hashlib")),
    ("generation", ("quizsvc/problems/",)),
    ("grading", ("quizsvc/grading", "quizsvc/bank/", "quizsvc/parsing/")),
    ("FSRS", ("fsrs_rs_python", "quizsvc/services/parameters.py")),
    ("queue", ("quizsvc/services/queue.py",)),
    ("SQL", ("sqlalchemy/", "sqlite3", "psycopg", "quizsvc/db/")),
    ("JSON", ("json/", "flask/json", "_json")),
    (
        "HTTP",
        (
            "flask/",
            "werkzeug/",
            "flask_login/",
            "quizsvc/http/",
            "quizsvc/api/",
            "quizsvc/app.py",
            "quizsvc/i18n",
            "babel/",
            "flask_babel/",
            "jinja2/",
            "quizsvc/ratelimits.py",
            "itsdangerous/",
            "click/",
            "blinker/",
        ),
    ),  # fmt: skip
    (
        "drill",
        (
            "quizsvc/services/",
            "quizsvc/models/",
            "quizsvc/scheduling.py",
            "quizsvc/text.py",
            "quizsvc/errors.py",
            "quizsvc/catalog",
        ),
    ),  # fmt: skip
)


def layer_of(filename: str, function: str) -> str:
    if filename == "~":  # a built-in called from nowhere profiled
        filename = function
    if "bench/" in filename:
        return "bench"
    if "quizsvc/scheduling.py" in filename and any(
        word in function for word in ("queue", "spread", "order", "interleave")
    ):
        return "queue"
    for layer, marks in LAYERS:
        if any(mark in filename for mark in marks):
            return layer
    return "other"


def run_cycles(client, tokens, cycles: int, seeds, tally: dict) -> int:
    """Drive `cycles` drill cycles over the learners in turn; return cycles done."""
    rng = random.Random(5)
    learners = [
        {"headers": {"Authorization": f"Bearer {t}"}, "user": u, "item": None}
        for t, u in tokens
    ]
    done = 0
    while done < cycles and learners:
        learner = learners[done % len(learners)]
        headers = learner["headers"]
        item = learner["item"]
        if item is None:
            response = client.get("/api/v1/drill/next", headers=headers)
            if response.status_code == 409:
                review = int(re.search(r"review_id (\d+)", response.json["message"])[1])
                client.post(
                    "/api/v1/drill/explanation",
                    json={"review_id": review, "text": "rows and columns"},
                    headers=headers,
                )
                continue
            item = response.json
        if item.get("done"):
            learners.remove(learner)
            continue
        started = time.perf_counter()
        body = load.answer_for(
            item, rng.random() < load.RIGHT_SHARE, lambda u=learner["user"]: seeds(u)
        )
        body.update(duration_ms=9000, idempotency_key=secrets.token_hex(8))
        tally["bench"] += time.perf_counter() - started
        result = client.post("/api/v1/drill/answer", json=body, headers=headers).json
        if result.get("requires_explanation"):
            explained = client.post(
                "/api/v1/drill/explanation",
                json={"review_id": result["review_id"], "text": "rows and columns"},
                headers=headers,
            ).json
            learner["item"] = explained.get("next")
        else:
            learner["item"] = result.get("next")
        done += 1
    return done


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--backend", choices=["sqlite", "postgresql"], default="sqlite")
    parser.add_argument("--cycles", type=int, default=300)
    parser.add_argument("--learners", type=int, default=8)
    parser.add_argument("--top", type=int, default=0)
    parser.add_argument(
        "--postgres-url", default=os.environ.get("QUIZSVC_TEST_POSTGRES_URL")
    )
    args = parser.parse_args()
    from quizsvc import create_app
    from quizsvc.bank_source import sync_into_database
    from quizsvc.db import get_engine, upgrade

    with (
        tempfile.TemporaryDirectory(prefix="quizsvc-profile-") as tmp,
        load.database(args.backend, Path(tmp), "profile", args.postgres_url) as url,
    ):
        app = create_app({"SECRET_KEY": "bench", "DATABASE_URL": url})
        logging.getLogger("quizsvc.requests").disabled = True
        upgrade(get_engine(app))
        sync_into_database(app)
        tokens = load.provision_learners(url, args.learners)
        seeds = load.Seeds(url)
        load._bank()
        client = app.test_client()
        run_cycles(client, tokens, 2 * args.learners, seeds, {"bench": 0.0})
        tally = {"bench": 0.0}
        # First without the profiler (its overhead is large): the rate.
        started = time.perf_counter()
        plain = run_cycles(client, tokens, args.cycles // 2, seeds, tally)
        rate = plain / (time.perf_counter() - started - tally["bench"])
        tally = {"bench": 0.0}
        profile = cProfile.Profile()
        profile.enable()
        done = run_cycles(client, tokens, args.cycles, seeds, tally)
        profile.disable()
        seeds.engine.dispose()
        get_engine(app).dispose()
    stats = pstats.Stats(profile)
    layers: dict[str, float] = {}
    for (filename, _line, function), row in stats.stats.items():
        self_time, callers = row[2], row[4]
        if filename == "~" and ".commit" in function or function == "commit":
            # The driver's commit: on a durable one, the wait for the disk.
            layers["commit"] = layers.get("commit", 0.0) + self_time
            continue
        if filename == "~" and callers and "sqlite3" not in function:
            # A built-in (dict.get, isinstance, ...): its time goes to the
            # layers that called it, in proportion.
            shares = {key: value[2] for key, value in callers.items()}
            weight = sum(shares.values()) or 1.0
            for (caller_file, _l, caller_function), share in shares.items():
                layer = layer_of(caller_file, caller_function)
                layers[layer] = layers.get(layer, 0.0) + self_time * share / weight
            continue
        layer = layer_of(filename, function)
        layers[layer] = layers.get(layer, 0.0) + self_time
    layers.pop("bench", None)
    total = sum(layers.values())
    print(
        f"{args.backend}: {rate:.1f} cycles/s in one process (one request at a "
        f"time, no profiler); {done} cycles profiled, self time by layer "
        f"(inflated by the profiler: read the shares):"
    )
    for layer, seconds in sorted(layers.items(), key=lambda kv: -kv[1]):
        print(
            f"  {layer:<11}{seconds / done * 1000:7.2f} ms per cycle "
            f"{seconds / total:6.1%}"
        )
    if args.top:
        stats.sort_stats("tottime").print_stats(args.top)


if __name__ == "__main__":
    main()
