"""The pure core imports NumPy and the standard library only."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys

import pytest

CORE_MODULES = [
    "quizsvc.engine",
    "quizsvc.parsing",
    "quizsvc.formatting",
    "quizsvc.problems",
    "quizsvc.grading",
    "quizsvc.bank",
    "quizsvc.scheduling",
    "quizsvc.item_types",
]
FORBIDDEN = ["flask", "sqlalchemy", "werkzeug", "jinja2", "alembic", "click"]


@pytest.mark.parametrize("module", CORE_MODULES)
def test_core_module_does_not_import_web_or_database_code(module):
    """Can the core be used (and tested) without Flask or a database?"""
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} does not exist yet")
    script = (
        f"import sys, json, {module}; "
        f"print(json.dumps(sorted(m for m in {FORBIDDEN!r} if m in sys.modules)))"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    assert json.loads(out.stdout) == []
