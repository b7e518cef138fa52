"""Grade a learner's answers to a generated problem, step by step.

For each asked quantity the grader checks the learner's value against the
engine's exact one (within the problem's tolerance) and, for a step computed
from earlier ones, against what the learner's own earlier answers imply
(error carried forward). It then names the classic mistake that explains the
first wrong step, by comparing the learner's numbers with every buggy
pipeline the problem carries. Pure NumPy and standard library.

The package, by concern: `reading` (typed text to arrays), `grader` (steps
against every pipeline), `carried` (error carried forward), `diagnosis`
(naming the mistake), `feedback` (the sentences), `messages` (the catalogue of
mistakes) and `verdict` (what a grade returns).
"""

from __future__ import annotations

from quizsvc.grading.grader import grade
from quizsvc.grading.messages import MISCONCEPTION_TITLES, MISCONCEPTIONS
from quizsvc.grading.reading import parse_answer
from quizsvc.grading.verdict import FormatError, StepResult, Verdict

__all__ = [
    "MISCONCEPTIONS",
    "MISCONCEPTION_TITLES",
    "FormatError",
    "StepResult",
    "Verdict",
    "grade",
    "parse_answer",
]
