"""The application factory: a table of contents of the service."""

from __future__ import annotations

import os
import secrets
from pathlib import Path
from typing import Any

from flask import Flask

def create_app(test_config: dict[str, Any] | None = None) -> Flask:
    """Create and configure the quizsvc Flask application."""
    app = Flask(
        __name__,
        instance_relative_config=True,
        instance_path=os.environ.get("QUIZSVC_INSTANCE_PATH") or None,
    )
    configure(app, test_config)
    register_extensions(app)
    register_blueprints(app)
    register_errorhandlers(app)
    return app


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


def _instance_secret_key(instance: Path) -> str:
    """Read the instance's secret key, creating it on first start."""
    # A key generated once and kept in the instance folder survives restarts (so
    # sessions do too) without anyone having to invent a secret by hand.
    path = instance / "secret_key"
    try:
        return path.read_text().strip()
    except FileNotFoundError:
        key = secrets.token_hex(32)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(key)
        return key


def register_extensions(app: Flask) -> None:
    """Bind the database and the Flask extensions to the app."""
    from quizsvc import db, i18n

    db.init_app(app)
    i18n.init_app(app)


def register_blueprints(app: Flask) -> None:
    """Attach the web pages and the API."""
    from quizsvc.formatting import format_number
    from quizsvc.web import explore, health, lab

    app.add_template_filter(format_number, "matrix_cell")
    app.register_blueprint(health.bp)
    app.register_blueprint(lab.bp)
    app.register_blueprint(explore.bp)


def register_errorhandlers(app: Flask) -> None:
    """Answer errors with a page (or JSON for API clients), never a traceback."""
    from quizsvc.web import errors

    errors.init_app(app)
