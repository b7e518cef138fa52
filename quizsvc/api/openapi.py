"""The OpenAPI 3.1 description of /api/v1, served at /api/v1/openapi.json.

The description is data, `openapi.json` beside this module, edited by hand
next to the routes; tests/api/test_openapi.py checks that every route is
described, every described operation exists, and Schemathesis calls them.
"""

from __future__ import annotations

import copy
import json
from functools import cache
from importlib import resources
from typing import Any

from quizsvc import __version__
from quizsvc.api import bp


@cache
def _loaded() -> dict[str, Any]:
    text = resources.files("quizsvc.api").joinpath("openapi.json").read_text("utf-8")
    document = json.loads(text)
    document["info"]["version"] = __version__
    return document


def build_document() -> dict[str, Any]:
    """Return the OpenAPI document (a copy: callers may change it)."""
    return copy.deepcopy(_loaded())


@bp.get("/openapi.json")
def openapi_document():
    """Serve the OpenAPI document."""
    return _loaded()
