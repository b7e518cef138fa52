"""What a grade returns: the verdict, one result per step, and the answers
that could not be read."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from quizsvc.problems import Ask


@dataclass(frozen=True)
class FormatError:
    """An answer that could not be read; it is not an attempt and costs nothing."""

    quantity: str
    message: Mapping[str, str]
    row: int | None = None
    col: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-serializable view."""
        return {
            "quantity": self.quantity,
            "row": self.row,
            "col": self.col,
            "message": dict(self.message),
        }


class StepResult(NamedTuple):
    """How one asked quantity was graded."""

    # A named tuple rather than a frozen dataclass: a grade builds one per
    # step, and a tuple is built several times faster.

    name: str
    answered: bool
    correct: bool
    score: float
    ok: Any = None
    consistent_with_previous: bool | None = None
    shape_error: Mapping[str, str] | None = None

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-serializable view."""
        return {
            "name": self.name,
            "answered": self.answered,
            "correct": self.correct,
            "score": self.score,
            "ok": self.ok,
            "consistent_with_previous": self.consistent_with_previous,
            "shape_error": dict(self.shape_error) if self.shape_error else None,
        }


class Verdict(NamedTuple):
    """The grade of one submission: per step, overall, and the diagnosis."""

    correct: bool
    score: float
    steps: tuple[StepResult, ...]
    misconception: str | None
    misconception_step: str | None
    feedback: Mapping[str, str]
    format_errors: tuple[FormatError, ...]

    @property
    def attempt(self) -> bool:
        """False when a format error means the submission should not count."""
        return not self.format_errors

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-serializable view."""
        return {
            "correct": self.correct,
            "score": self.score,
            "attempt": self.attempt,
            "steps": [s.to_dict() for s in self.steps],
            "misconception": self.misconception,
            "misconception_step": self.misconception_step,
            "feedback": dict(self.feedback),
            "format_errors": [e.to_dict() for e in self.format_errors],
        }


# `_Step.derived` when the grader did not derive the step from earlier ones.
NOT_DERIVED: Any = object()


class _Step(NamedTuple):
    ask: Ask
    value: np.ndarray | None
    result: StepResult
    matches: list[bool] | None  # per pipeline (names, then virtual): agrees
    # What the learner's earlier answers imply for this step (None: nothing can
    # be derived), kept for the diagnosis; NOT_DERIVED when it was not computed.
    derived: Any = NOT_DERIVED
