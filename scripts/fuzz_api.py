"""Fuzz the JSON API from its OpenAPI description with Schemathesis; print figures.

    .venv/bin/python scripts/fuzz_api.py [--backend sqlite|postgresql]
                                         [--examples 300] [--seed N]

The app runs in-process (WSGI) on a fresh database with the real question bank
and one signed-in learner (a bearer token). Every operation gets `--examples`
valid and as many invalid requests; each response is checked against the
description (status, content type, body schema) and must not be a 5xx. It
prints requests sent, statuses seen and every failure, and exits 1 on any.
PostgreSQL needs QUIZSVC_TEST_POSTGRES_URL (a private schema is used, then
dropped). tests/test_api_fuzz.py runs the same driver, bounded, in the suite.
"""

from __future__ import annotations

import argparse
import os
import secrets
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import schemathesis  # noqa: E402
from hypothesis import HealthCheck, Phase, given, settings  # noqa: E402
from hypothesis.errors import Unsatisfiable  # noqa: E402
from schemathesis.auths import AuthStorage  # noqa: E402
from schemathesis.generation import GenerationMode  # noqa: E402
from schemathesis.specs.openapi.checks import positive_data_acceptance  # noqa: E402
from werkzeug.test import Client  # noqa: E402

MODES = (GenerationMode.POSITIVE, GenerationMode.NEGATIVE)
# "Schema-valid data gets a 2xx" is a heuristic, not the description: the API
# documents 400s for rules a schema cannot state (a guessable password, a
# username taken, a NUL character in a string), and those are what it sends.
EXCLUDED_CHECKS = [positive_data_acceptance]


class OutOfTime(Exception):
    """The run's time budget is spent."""


@dataclass
class FuzzReport:
    """What a fuzzing run sent and found."""

    requests: int = 0
    stopped_early: bool = False
    statuses: Counter = field(default_factory=Counter)
    failures: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        """The figures, one per line."""
        statuses = ", ".join(f"{k}: {v}" for k, v in sorted(self.statuses.items()))
        return [
            f"requests: {self.requests}",
            f"statuses: {statuses}",
            f"5xx: {sum(v for k, v in self.statuses.items() if k >= 500)}",
            f"failures: {len(self.failures)}",
            *(
                ["(some operations stopped at their time budget)"]
                if self.stopped_early
                else []
            ),
            *(f"  {failure}" for failure in self.failures),
        ]


def fuzz(
    app,
    headers: dict[str, str],
    *,
    examples: int,
    seed: int | None = None,
    progress: bool = False,
    seconds: float | None = None,
):
    """Send generated requests to every operation; return a FuzzReport."""
    report = FuzzReport()
    schema = schemathesis.openapi.from_wsgi("/api/v1/openapi.json", app)
    operations = [result.ok() for result in schema.get_all_operations()]
    # A time budget is shared out evenly, so every operation gets its turn.
    share = seconds / (len(operations) * len(MODES)) if seconds else None
    learner = AuthStorage()

    # The learner's own credentials, applied by Schemathesis itself: its checks
    # then know them for real (not generated) and probe without them too.
    @learner.auth(refresh_interval=None)
    class LearnerAuth:
        def get(self, case, context):
            return headers

        def set(self, case, data, context):
            case.headers = {**(case.headers or {}), **data}

    for operation in operations:
        for mode in MODES:
            deadline = time.monotonic() + share if share else None
            label = f"{operation.method.upper()} {operation.path} ({mode.value})"

            @given(
                case=operation.as_strategy(generation_mode=mode, auth_storage=learner)
            )
            @settings(
                max_examples=examples,
                deadline=None,
                database=None,
                derandomize=seed is not None,
                suppress_health_check=list(HealthCheck),
                # Report a failure as found: shrinking re-sends hundreds of
                # requests per failure and the first example already says it.
                phases=[Phase.explicit, Phase.generate],
            )
            def send(case) -> None:
                # Called right below, within this iteration.
                if deadline is not None and time.monotonic() > deadline:  # noqa: B023
                    raise OutOfTime
                if progress:
                    print(f"\r{report.requests} requests", end="", file=sys.stderr)
                # A client of its own: a session cookie set by an earlier answer
                # (a generated registration signs in) must not carry over, or
                # "is a request without credentials refused?" is asked with one.
                client = Client(app)
                response = case.call(session=client)
                report.requests += 1
                report.statuses[response.status_code] += 1
                case.validate_response(
                    response,
                    excluded_checks=EXCLUDED_CHECKS,
                    transport_kwargs={"session": client},
                )

            try:
                send()
            except OutOfTime:
                report.stopped_early = True
            except Unsatisfiable:
                # No invalid request exists for it (e.g. one free string in the path).
                continue
            except (Exception, BaseExceptionGroup) as failure:  # every kind is reported
                # The whole message: Schemathesis ends it with a curl line that
                # reproduces the request; anything else is named by its type.
                lines = [line.strip() for line in str(failure).splitlines()]
                text = " | ".join(line for line in lines if line)
                if not isinstance(failure, BaseExceptionGroup) and "curl" not in text:
                    text = f"{type(failure).__name__}: {text}"
                report.failures.append(f"{label}: {text}")
    return report


def prepare(app) -> dict[str, str]:
    """Sync the bank, add a learner, and return a bearer header signed in as them."""
    from quizsvc import bank
    from quizsvc.db import get_session
    from quizsvc.services.accounts import issue_token, register
    from quizsvc.services.bank_sync import sync_bank

    with app.app_context():
        session = get_session()
        sync_bank(session, bank.load())
        user = register(session, "fuzzer", "a long fuzzing passphrase")
        secret = issue_token(session, user, "fuzz").secret
        session.commit()
    return {"Authorization": f"Bearer {secret}"}


def _postgres_schema_url(base: str) -> tuple[str, object]:
    from sqlalchemy import text
    from sqlalchemy.engine import make_url
    from sqlalchemy.pool import NullPool

    from quizsvc.db import make_engine

    name = f"quizsvc_fuzz_{os.getpid()}_{secrets.token_hex(4)}"
    admin = make_engine(base, poolclass=NullPool)
    with admin.begin() as connection:
        connection.execute(text(f'CREATE SCHEMA "{name}"'))

    def drop() -> None:
        with admin.begin() as connection:
            connection.execute(text(f'DROP SCHEMA "{name}" CASCADE'))

    url = make_url(base).update_query_dict({"options": f"-csearch_path={name}"})
    return url.render_as_string(hide_password=False), drop


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=("sqlite", "postgresql"), default="sqlite")
    parser.add_argument("--examples", type=int, default=300)
    parser.add_argument("--seed", type=int)
    parser.add_argument(
        "--seconds", type=float, help="stop starting new requests after this long"
    )
    args = parser.parse_args()

    import logging

    from quizsvc import create_app
    from quizsvc.db import get_engine, upgrade

    # Thousands of request lines would bury the figures.
    logging.getLogger("quizsvc.requests").disabled = True

    drop = None
    with tempfile.TemporaryDirectory() as folder:
        if args.backend == "postgresql":
            base = os.environ.get("QUIZSVC_TEST_POSTGRES_URL")
            if not base:
                print("set QUIZSVC_TEST_POSTGRES_URL for --backend postgresql")
                return 2
            url, drop = _postgres_schema_url(base)
        else:
            url = f"sqlite:///{Path(folder) / 'fuzz.sqlite3'}"
        try:
            app = create_app(
                {"SECRET_KEY": "fuzz", "DATABASE_URL": url, "RATELIMIT_ENABLED": False}
            )
            upgrade(get_engine(app))
            headers = prepare(app)
            started = time.perf_counter()
            report = fuzz(
                app,
                headers,
                examples=args.examples,
                seed=args.seed,
                progress=True,
                seconds=args.seconds,
            )
            print(file=sys.stderr)
            elapsed = time.perf_counter() - started
            get_engine(app).dispose()
        finally:
            if drop is not None:
                drop()
    print(f"backend: {args.backend}, {args.examples} examples per operation and mode")
    for line in report.lines():
        print(line)
    print(f"seconds: {elapsed:.1f} ({report.requests / elapsed:.0f} requests/s)")
    return 1 if report.failures else 0


if __name__ == "__main__":
    sys.exit(main())
