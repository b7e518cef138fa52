"""quizsvc: spaced-repetition drills for computing transformer attention by hand.

Importing the package stays light so the pure core (engine, problems, grading,
bank, scheduling policy) can be used without Flask or a database.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from flask import Flask

__version__ = "0.1.0"


def create_app(test_config: dict[str, Any] | None = None) -> Flask:
    """Create and configure the quizsvc Flask application."""
    from quizsvc.app import create_app as factory

    return factory(test_config)
