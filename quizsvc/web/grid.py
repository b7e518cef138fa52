"""The answer grid of a generated problem: marks per cell, pasted matrices shown.

Shared by Practice and the drill's result page.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from quizsvc import grading, problems
from quizsvc.engine import jsonable
from quizsvc.parsing import parse_flag
from quizsvc.web.filters import answer_cell


def cell_marks(verdict: grading.Verdict) -> dict[str, dict[tuple[int, int], bool]]:
    """Return {ask name: {(row, col): right?}} from each step's per-cell marks."""
    marks: dict[str, dict[tuple[int, int], bool]] = {}
    for step in verdict.steps:
        ok = step.ok
        if isinstance(ok, list) and ok and isinstance(ok[0], list):
            marks[step.name] = {
                (i, j): bool(cell)
                for i, row in enumerate(ok)
                for j, cell in enumerate(row)
            }
    return marks


def stored_cell_marks(
    verdict: dict[str, Any],
) -> dict[str, dict[tuple[int, int], bool]]:
    """Return the same marks from a stored verdict (its steps as dicts)."""
    marks: dict[str, dict[tuple[int, int], bool]] = {}
    for step in verdict.get("steps") or ():
        ok = step.get("ok")
        if isinstance(ok, list) and ok and isinstance(ok[0], list):
            marks[step["name"]] = {
                (i, j): bool(cell)
                for i, row in enumerate(ok)
                for j, cell in enumerate(row)
            }
    return marks


def parsed_answer(ask: problems.Ask, value: Any) -> np.ndarray | None:
    """Read one typed answer as the grader does; None when it cannot be read."""
    if ask.format == "boolean_matrix":
        parsed = grading.parse_answer(
            value, ask.shape, name=ask.name, number=parse_flag
        )
    else:
        parsed = grading.parse_answer(value, ask.shape, name=ask.name)
    return parsed if isinstance(parsed, np.ndarray) else None


def move_paste_into_grid(
    problem: problems.Problem, answers: dict[str, Any], values: dict[str, str]
) -> None:
    """Show a pasted matrix in its grid, where the marks are drawn."""
    for ask in problem.ask:
        pasted = values.get(f"paste-{ask.name}", "").strip()
        if ask.format not in ("matrix", "boolean_matrix") or not pasted:
            continue
        parsed = parsed_answer(ask, answers.get(ask.name))
        if parsed is None or parsed.shape != tuple(ask.shape):
            continue  # e.g. typed transposed: leave it as typed
        for (i, j), entry in np.ndenumerate(parsed):
            key = f"cell-{ask.name}-{i}-{j}"
            if ask.format == "boolean_matrix":
                values[key] = "1" if entry > 0.5 else ""
            else:
                values[key] = answer_cell(jsonable(np.float64(entry)))
        values[f"paste-{ask.name}"] = ""
