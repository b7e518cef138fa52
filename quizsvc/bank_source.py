"""The question bank as the running app sees it: loaded once, from QUESTIONS_PATH."""

from __future__ import annotations

from flask import current_app

from quizsvc import bank

EXTENSION_KEY = "quizsvc.bank"


def get_bank() -> bank.Bank:
    """Return the app's bank (loaded from the questions folder on first use)."""
    loaded = current_app.extensions.get(EXTENSION_KEY)
    if loaded is None:
        path = current_app.config.get("QUESTIONS_PATH") or bank.DEFAULT_PATH
        loaded = current_app.extensions[EXTENSION_KEY] = bank.load(path)
    return loaded


def sync_into_database(app):
    """Bring the database in line with the bank (idempotent); return the report."""
    from quizsvc.db import transaction
    from quizsvc.services.bank_sync import sync_bank

    with app.app_context(), transaction() as session:
        return sync_bank(session, get_bank())
