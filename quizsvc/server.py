"""Run the app under gunicorn from `quizsvc serve`."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import click
from gunicorn.app.base import BaseApplication

from quizsvc import create_app
from quizsvc.bank import BankError
from quizsvc.catalog import sync_into_database


class QuizsvcServer(BaseApplication):
    """A gunicorn application that loads quizsvc from its factory."""

    def __init__(self, options: dict[str, Any]):
        self.options = options
        super().__init__()

    def load_config(self) -> None:
        for key, value in self.options.items():
            # Settings newer than the installed gunicorn are skipped, not fatal.
            if key in self.cfg.settings:
                self.cfg.set(key, value)

    def load(self):
        return create_app()


def _announce(server) -> None:
    for listener in server.LISTENERS:
        host, port = listener.sock.getsockname()[:2]
        shown = "127.0.0.1" if host in ("0.0.0.0", "::") else host
        click.echo(
            f"quizsvc is running: open http://{shown}:{port}/ (Ctrl+C stops it)",
            err=False,
        )


def _exit_now(_worker) -> None:
    """End a worker at once on Ctrl+C (SIGINT) or SIGQUIT.

    A worker's threads may sit in a slow client's half-sent request; exiting
    normally waits for them, so Ctrl+C hung for the whole graceful timeout and
    ended with the arbiter's SIGKILL ("Perhaps out of memory?").
    """
    os._exit(0)


def _forget_worker_metrics(server, worker) -> None:
    from prometheus_client import multiprocess

    multiprocess.mark_process_dead(worker.pid)


def run_server(*, host: str, port: int, workers: int) -> None:
    """Prepare the database and serve until interrupted."""
    # Workers share their metrics through files in a directory of this run
    # only (quizsvc.metrics); it must be set before prometheus_client loads.
    metrics_dir = tempfile.mkdtemp(prefix="quizsvc-metrics-")
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = metrics_dir
    try:
        app = create_app()
    except ValueError as exc:  # a setting with a value it cannot take
        raise click.UsageError(str(exc)) from None
    from quizsvc import db

    db.prepare_database(app)
    click.echo(f"database: {app.config['DATABASE_URL']}")
    try:
        report = sync_into_database(app)
    except BankError as exc:
        raise click.ClickException(f"the question bank is invalid:\n{exc}") from None
    click.echo("question bank: " + "; ".join(report.lines()))
    QuizsvcServer(
        {
            **gunicorn_options(
                host=host, port=port, workers=workers, instance_path=app.instance_path
            ),
            "child_exit": _forget_worker_metrics,
            "on_exit": lambda server: shutil.rmtree(metrics_dir, ignore_errors=True),
        }
    ).run()


def gunicorn_options(
    *, host: str, port: int, workers: int, instance_path: str
) -> dict[str, Any]:
    """The gunicorn settings `quizsvc serve` runs with (bench/load.py reuses them)."""
    return {
        "bind": f"[{host}]:{port}" if ":" in host else f"{host}:{port}",
        "workers": workers,
        # Threads keep a slow phone connection from holding a whole worker.
        "worker_class": "gthread",
        "threads": 4,
        # quizsvc logs one structured line per request itself (no access log).
        "when_ready": _announce,
        "timeout": 60,
        "worker_int": _exit_now,
        # SIGTERM (a service manager's stop) lets requests finish, briefly.
        "graceful_timeout": 10,
        # One control socket per instance, so two services on one machine
        # (or two test runs) do not take each other's.
        "control_socket": str(Path(instance_path) / "gunicorn.ctl"),
    }
