"""Shared fixtures: an app on a temporary instance folder, its client and CLI runner."""

from __future__ import annotations

import pytest

from quizsvc import create_app


@pytest.fixture
def app(tmp_path):
    """An app whose SQLite database lives in a fresh temporary folder."""
    app = create_app(
        {
            "TESTING": True,
            "SECRET_KEY": "test-secret",
            "DATABASE_URL": f"sqlite:///{tmp_path / 'quizsvc.sqlite3'}",
        }
    )
    yield app


@pytest.fixture
def client(app):
    return app.test_client()


@pytest.fixture
def runner(app):
    return app.test_cli_runner()
