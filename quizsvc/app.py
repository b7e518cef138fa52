"""The application factory: a table of contents of the service."""

from __future__ import annotations

import os
import secrets
import tempfile
from pathlib import Path
from typing import Any

from flask import Flask, has_request_context, request
from flask.sessions import SecureCookieSessionInterface
from werkzeug.middleware.proxy_fix import ProxyFix


def create_app(test_config: dict[str, Any] | None = None) -> Flask:
    """Create and configure the quizsvc Flask application."""
    app = _new_app()
    configure(app, test_config)
    register_extensions(app)
    register_blueprints(app)
    register_errorhandlers(app)
    register_response_hooks(app)
    return app


def create_data_app(test_config: dict[str, Any] | None = None) -> Flask:
    """Create the application with its configuration and database only.

    For commands that read or write data and serve no pages (`quizsvc
    export`): the web's extensions, blueprints and hooks would cost each run
    about a third of a second to import and set up.
    """
    from quizsvc import db

    app = _new_app()
    configure(app, test_config)
    db.init_app(app)
    return app


def default_instance_path() -> str:
    """The instance folder create_app would use (it may not exist yet)."""
    return _new_app().instance_path


def _new_app() -> Flask:
    return Flask(
        __name__,
        instance_relative_config=True,
        instance_path=os.environ.get("QUIZSVC_INSTANCE_PATH") or None,
    )


def configure(app: Flask, test_config: dict[str, Any] | None) -> None:
    """Layer the configuration: defaults, instance/config.py, QUIZSVC_* variables."""
    from quizsvc import config

    app.config.from_object(config.Defaults)
    if test_config is None:
        app.config.from_pyfile("config.py", silent=True)
        app.config.from_prefixed_env("QUIZSVC")
    else:
        app.config.from_mapping(test_config)
    Path(app.instance_path).mkdir(parents=True, exist_ok=True)
    if not app.config.get("DATABASE_URL"):
        database = Path(app.instance_path) / "quizsvc.sqlite3"
        app.config["DATABASE_URL"] = f"sqlite:///{database}"
    if not app.config.get("SECRET_KEY"):
        app.config["SECRET_KEY"] = _instance_secret_key(Path(app.instance_path))
    if not app.config.get("RATELIMIT_STORAGE_URI"):
        # Every worker of this machine counts in one file; a test app (given a
        # dict) keeps its counters to itself.
        counters = Path(app.instance_path) / "ratelimits.sqlite3"
        app.config["RATELIMIT_STORAGE_URI"] = (
            "memory://" if test_config is not None else f"sqlite:///{counters}"
        )
    from quizsvc import ratelimits

    ratelimits.configure(app)


def _instance_secret_key(instance: Path) -> str:
    """Read the instance's secret key, creating it on first start."""
    # A key generated once and kept in the instance folder survives restarts (so
    # sessions do too) without anyone having to invent a secret by hand.
    path = instance / "secret_key"
    try:
        return path.read_text().strip()
    except FileNotFoundError:
        pass
    # Written whole under another name, then linked into place: a full disk
    # leaves no empty key behind, and of two servers starting at once the
    # second takes the first one's key.
    key = secrets.token_hex(32)
    fd, draft = tempfile.mkstemp(dir=instance, prefix=".secret_key-")
    try:
        with os.fdopen(fd, "w") as handle:
            handle.write(key)
            handle.flush()
            os.fsync(handle.fileno())
        os.link(draft, path)
    except FileExistsError:
        return path.read_text().strip()
    finally:
        os.unlink(draft)
    return key


def register_extensions(app: Flask) -> None:
    """Bind the database and the Flask extensions to the app."""
    from quizsvc import db, i18n
    from quizsvc.extensions import csrf, limiter
    from quizsvc.http import input_checks, login

    # First: the `int` URL converter must be in place before any route exists.
    input_checks.init_app(app)
    db.init_app(app)
    i18n.init_app(app)
    csrf.init_app(app)
    limiter.init_app(app)
    login.init_app(app)
    app.session_interface = HttpsAwareSessionInterface()
    if app.config.get("TRUSTED_PROXIES"):
        # Behind a reverse proxy the client address and scheme come from its
        # X-Forwarded-* headers (needed for rate limits and Secure cookies).
        hops = int(app.config["TRUSTED_PROXIES"])
        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=hops, x_proto=hops, x_host=hops)


class HttpsAwareSessionInterface(SecureCookieSessionInterface):
    """Mark the session cookie Secure whenever the request came over HTTPS."""

    def get_cookie_secure(self, app: Flask) -> bool:
        return bool(app.config["SESSION_COOKIE_SECURE"]) or (
            has_request_context() and request.is_secure
        )


def register_blueprints(app: Flask) -> None:
    """Attach the web pages and the API."""
    from quizsvc import api
    from quizsvc.web import (
        assess,
        auth,
        classes,
        drill,
        explore,
        filters,
        health,
        home,
        lab,
        practice,
        progress,
        settings,
        teacher,
        teacher_roster,  # noqa: F401  (adds the roster pages to teacher.bp)
        teacher_settings,  # noqa: F401  (adds the settings pages to teacher.bp)
    )

    filters.init_app(app)
    for blueprint in (
        health.bp,
        home.bp,
        lab.bp,
        explore.bp,
        auth.bp,
        drill.today_bp,
        drill.bp,
        practice.bp,
        assess.bp,
        progress.bp,
        settings.bp,
        classes.bp,
        teacher.bp,
    ):
        app.register_blueprint(blueprint)
    api.init_app(app)
    # LTI 1.3 (launches from an LMS): its own edge, registered in one call.
    from quizsvc.lti import wiring as lti

    lti.init_app(app)


def register_response_hooks(app: Flask) -> None:
    """Request ids and log lines, metrics, and security headers on every response."""
    from quizsvc import metrics
    from quizsvc.http import headers, requestlog

    # Flask runs after-request hooks last-registered first: the log line
    # measures the duration that the metrics then record.
    metrics.init_app(app)
    requestlog.init_app(app)
    headers.init_app(app)


def register_errorhandlers(app: Flask) -> None:
    """Answer errors with a page (or JSON for API clients), never a traceback."""
    from quizsvc.http import errors

    errors.init_app(app)
