"""Run the app under gunicorn from `quizsvc serve`.

How a request reaches the app
-----------------------------
gunicorn's asyncio worker (`asgi`) reads every connection's request line and
headers in its event loop, and `_BufferedRequests` reads the body there too;
only a complete request takes one of the worker's application threads, where
a2wsgi runs the Flask app. A client that sends its request a byte at a time
costs a socket and a few bytes of memory, never a thread, so a crowd of them
cannot make learners wait. (gunicorn's `gthread` worker hands a connection to
a thread at its first byte: 8 slow connections held all 2 x 4 threads.)

A connection must finish its first request's headers within
`REQUEST_READ_TIMEOUT` seconds (later ones within the keep-alive timeout) and
send its body within the same time once the headers are in, or it is closed.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import click
from a2wsgi import WSGIMiddleware
from gunicorn.app.base import BaseApplication
from gunicorn.asgi.protocol import ASGIProtocol
from gunicorn.workers import gasgi

from quizsvc import create_app
from quizsvc.bank import BankError
from quizsvc.bank_source import sync_into_database
from quizsvc.config import Defaults
from quizsvc.startup import (
    ENVIRONMENT_ERRORS,
    StartupError,
    check_database_reachable,
    safe_url,
)
from quizsvc.startup import explain as explain_start


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
        app = self.flask_app()
        return _BufferedRequests(
            WSGIMiddleware(app, workers=APP_THREADS),
            probes=WSGIMiddleware(app, workers=PROBE_THREADS),
            max_body=_setting(app, "MAX_CONTENT_LENGTH"),
            read_timeout=float(_setting(app, "REQUEST_READ_TIMEOUT")),
        )

    def flask_app(self):
        """Create the WSGI app the workers serve."""
        return create_app()


def _setting(app: Any, name: str) -> Any:
    # A bare Flask app (bench/load.py's floor) has quizsvc's defaults.
    value = app.config.get(name)
    return getattr(Defaults, name) if value is None else value


# Threads per worker that run the app: requests served at the same time.
APP_THREADS = 4
# The probes and metrics run on threads of their own, so they answer while
# every app thread waits on a hung dependency.
PROBE_THREADS = 2
PROBE_PATHS = frozenset({"/healthz", "/readyz", "/metrics"})


class _BufferedRequests:
    """An ASGI app that reads a request's whole body before the app gets a thread.

    a2wsgi would hand the body to the app as it arrives, so a client that
    sends it slowly would hold a thread for as long as it likes.
    """

    def __init__(self, app: Any, *, probes: Any, max_body: int, read_timeout: float):
        self.app = app
        self.probes = probes
        self.max_body = max_body
        self.read_timeout = read_timeout

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        declared = _content_length(scope)
        if declared is not None and declared > self.max_body:
            # Flask refuses it by the header with its own 413 page, unread.
            return await self.app(scope, _replay([]), send)
        messages: list[dict] = []
        size = 0
        try:
            async with asyncio.timeout(self.read_timeout):
                while True:
                    message = await receive()
                    if message["type"] == "http.disconnect":
                        return None
                    messages.append(message)
                    size += len(message.get("body", b""))
                    if size > self.max_body:
                        return await _plain(send, 413, "Request Entity Too Large")
                    if not message.get("more_body"):
                        break
        except TimeoutError:
            return await _plain(send, 408, "Request Timeout")
        app = self.probes if scope["path"] in PROBE_PATHS else self.app
        return await app(scope, _replay(messages), send)


def _content_length(scope: dict) -> int | None:
    for name, value in scope.get("headers", ()):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


def _replay(messages: list[dict]) -> Any:
    pending = list(messages) or [{"type": "http.request", "body": b""}]

    async def receive() -> dict:
        if pending:
            return pending.pop(0)
        # The body has been handed over; nothing else will come.
        await asyncio.Event().wait()
        return {"type": "http.disconnect"}

    return receive


async def _plain(send: Any, status: int, text: str) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"text/plain; charset=utf-8"),
                (b"connection", b"close"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": text.encode() + b"\n"})


class _HeaderDeadlineProtocol(ASGIProtocol):
    """gunicorn's HTTP protocol, closing a connection slow to send its first headers.

    gunicorn bounds the wait for a kept-alive connection's next request
    (keepalive) but not for the first one.
    """

    def connection_made(self, transport: Any) -> None:
        super().connection_made(transport)
        self._quizsvc_deadline = self.worker.loop.call_later(
            self.worker.read_timeout, self._quizsvc_headers_overdue
        )

    def _quizsvc_headers_overdue(self) -> None:
        if self.req_count <= 1 and self._current_request is None and not self._closed:
            # What gunicorn does when a kept-alive connection idles too long.
            self._keepalive_timeout()

    def connection_lost(self, exc: BaseException | None) -> None:
        self._quizsvc_deadline.cancel()
        super().connection_lost(exc)


class QuizsvcWorker(gasgi.ASGIWorker):
    """gunicorn's asyncio worker with a deadline for the first request's headers."""

    # Set from REQUEST_READ_TIMEOUT by run_server, before the workers fork.
    read_timeout = 20.0

    def init_process(self) -> None:
        # The worker builds its connections from this module-level name; this
        # process (a forked worker) only.
        gasgi.ASGIProtocol = _HeaderDeadlineProtocol
        super().init_process()


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
    """Prepare the database and serve until interrupted.

    A machine that cannot run the service (a full disk, an instance folder it
    may not write, a database it cannot reach) ends the start with one line
    saying so and exit status 2, leaving nothing of this run behind.
    """
    # Workers share their metrics through files in a directory of this run
    # only (quizsvc.metrics); it must be set before prometheus_client loads.
    try:
        metrics_dir = tempfile.mkdtemp(prefix="quizsvc-metrics-")
    except OSError:
        raise StartupError(
            explain_start(OSError(), [Path(tempfile.gettempdir())])
        ) from None
    from quizsvc.app import default_instance_path

    instance = Path(default_instance_path())
    instance_existed = instance.exists()
    try:
        app = _prepare(metrics_dir)
    except BaseException:
        shutil.rmtree(metrics_dir, ignore_errors=True)
        if not instance_existed:
            # A folder this start made holds nothing but what it wrote: a key
            # no session uses yet, counters, a database with no learner.
            shutil.rmtree(instance, ignore_errors=True)
        raise
    QuizsvcServer(
        {
            **gunicorn_options(
                host=host,
                port=port,
                workers=workers,
                instance_path=app.instance_path,
                trusted_proxies=int(app.config.get("TRUSTED_PROXIES") or 0),
            ),
            "child_exit": _forget_worker_metrics,
            "on_exit": lambda server: shutil.rmtree(metrics_dir, ignore_errors=True),
        }
    ).run()


def _prepare(metrics_dir: str):
    """Create the app, bring its database up to date and sync the question bank."""
    from quizsvc import db
    from quizsvc.app import default_instance_path

    os.environ["PROMETHEUS_MULTIPROC_DIR"] = metrics_dir
    folders = [Path(default_instance_path())]
    try:
        app = create_app()
        folders = [Path(app.instance_path), *_sqlite_folder(app)]
        QuizsvcWorker.read_timeout = float(app.config["REQUEST_READ_TIMEOUT"])
        check_database_reachable(app.config["DATABASE_URL"])
        db.prepare_database(app)
        click.echo(f"database: {safe_url(app.config['DATABASE_URL'])}")
        report = sync_into_database(app)
    except ValueError as exc:  # a setting with a value it cannot take
        raise click.UsageError(str(exc)) from None
    except BankError as exc:
        raise click.ClickException(f"the question bank is invalid:\n{exc}") from None
    except ENVIRONMENT_ERRORS as exc:
        raise StartupError(explain_start(exc, folders)) from None
    click.echo("question bank: " + "; ".join(report.lines()))
    return app


def _sqlite_folder(app) -> list[Path]:
    from sqlalchemy.engine import make_url

    url = make_url(app.config["DATABASE_URL"])
    if url.get_backend_name() == "sqlite" and url.database not in (None, ":memory:"):
        return [Path(url.database).resolve().parent]
    return []


def gunicorn_options(
    *,
    host: str,
    port: int,
    workers: int,
    instance_path: str,
    trusted_proxies: int = 0,
) -> dict[str, Any]:
    """The gunicorn settings `quizsvc serve` runs with (bench/load.py reuses them)."""
    return {
        "bind": f"[{host}]:{port}" if ":" in host else f"{host}:{port}",
        # Whose X-Forwarded-* gunicorn believes: nobody's unless
        # QUIZSVC_TRUSTED_PROXIES says proxies stand in front (the app's
        # ProxyFix then reads that many hops). gunicorn's own default trusts
        # 127.0.0.1, so any local client could claim HTTPS and get Secure
        # cookies and HSTS over plain HTTP.
        "forwarded_allow_ips": "*" if trusted_proxies > 0 else "",
        "workers": workers,
        # The event loop reads requests; only complete ones take a thread.
        "worker_class": "quizsvc.server.QuizsvcWorker",
        # The app says when it is ready to serve; no ASGI lifespan events.
        "asgi_lifespan": "off",
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
