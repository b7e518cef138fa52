"""The loaded bank: lessons, skills, notes, questions and answer verdicts.

Frozen dataclasses built by `quizsvc.bank.read`; nothing here reads a file.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

LANGUAGES = ("zh-CN", "en")
QUESTION_TYPES = ("choice", "numeric", "cloze", "recall", "ordering", "generated")
CHECKABLE_TYPES = ("choice", "numeric", "cloze", "ordering")
DIFFICULTIES = (1, 2, 3)
DEFAULT_PATH = Path(__file__).resolve().parents[2] / "questions"
LESSON_FILE = "lesson.toml"

SELF_ASSESSMENT_SCALE: tuple[dict[str, Any], ...] = (
    {"level": 0, "zh-CN": "还不会", "en": "not yet"},
    {"level": 1, "zh-CN": "看着资料能做", "en": "with notes"},
    {"level": 2, "zh-CN": "闭卷能做", "en": "closed-book"},
    {"level": 3, "zh-CN": "能讲给别人听", "en": "can teach it"},
)


@dataclass(frozen=True)
class Problem:
    """One thing wrong with the bank, located as a person would look for it."""

    path: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.message}"


class BankError(ValueError):
    """The bank is invalid; `problems` lists every `Problem` found."""

    def __init__(self, problems: Sequence[Problem]):
        self.problems = list(problems)
        shown = "\n".join(str(p) for p in self.problems[:20])
        more = len(self.problems) - 20
        suffix = f"\n… and {more} more" if more > 0 else ""
        super().__init__(
            f"the question bank has {len(self.problems)} problem(s):\n{shown}{suffix}"
        )


@dataclass(frozen=True)
class Idea:
    """One idea the lesson teaches, and the questions that exercise it."""

    id: str
    text: dict
    question_ids: tuple[str, ...]


@dataclass(frozen=True)
class Lesson:
    """A lesson: its number, title, summary, prerequisites, skills and ideas."""

    id: str
    number: int
    title: dict
    summary: dict
    prerequisites: tuple[str, ...]
    skill_ids: tuple[str, ...]
    # Titles of the prerequisites (lesson id → {"zh-CN", "en"}), so a lesson that
    # is not in this bank yet can still be named to the learner.
    prerequisite_titles: dict = field(default_factory=dict)
    # The lesson's ideas, each with the questions that exercise it (the
    # coverage map: `quizsvc questions coverage`).
    ideas: tuple[Idea, ...] = ()


@dataclass(frozen=True)
class Skill:
    """A can-do statement learners rate themselves on (`SELF_ASSESSMENT_SCALE`)."""

    id: str
    lesson_id: str
    order: int
    title: dict
    can_do: dict


@dataclass(frozen=True)
class Note:
    """A short lesson note on one idea, reopened after an explained wrong answer."""

    id: str
    lesson_id: str
    title: dict
    body: dict


@dataclass(frozen=True)
class Question:
    """One question of the bank; `data` holds the fields of its type."""

    id: str
    lesson_id: str
    type: str
    skills: tuple[str, ...]
    prompt: dict
    explanation: dict
    lesson_note: str
    difficulty: int | None
    data: dict
    content_hash: str

    def to_dict(self) -> dict[str, Any]:
        """Return every field, JSON-serializable (±inf in inputs as strings)."""
        return {
            "id": self.id,
            "lesson_id": self.lesson_id,
            "type": self.type,
            "skills": list(self.skills),
            "prompt": dict(self.prompt),
            "explanation": dict(self.explanation),
            "lesson_note": self.lesson_note,
            "difficulty": self.difficulty,
            "data": _json_safe(self.data),
            "content_hash": self.content_hash,
        }


@dataclass(frozen=True)
class Bank:
    """Every lesson, skill, note and question, each dict in file order."""

    lessons: dict[str, Lesson]
    skills: dict[str, Skill]
    notes: dict[str, Note]
    questions: dict[str, Question]
    # Ids of questions removed from the bank; they may never be used again.
    retired_ids: frozenset[str] = frozenset()

    def questions_for_skill(self, skill_id: str) -> tuple[Question, ...]:
        """Return the questions that practise `skill_id`, in file order."""
        return tuple(q for q in self.questions.values() if skill_id in q.skills)

    def counts_by_type(self) -> dict[str, int]:
        """Return how many questions of each type the bank holds (all types)."""
        counts = dict.fromkeys(QUESTION_TYPES, 0)
        for question in self.questions.values():
            counts[question.type] += 1
        return counts


@dataclass(frozen=True)
class AnswerCheck:
    """The verdict on a typed answer: right or not, a score, and why."""

    correct: bool
    score: float
    expected: str
    detail: dict


def _json_safe(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(v) for v in value]
    if isinstance(value, float) and math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return value


def is_number(value: Any) -> bool:
    """Return whether `value` is an int or float (a bool is not a number here)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def within_tolerance(value: float, answer: float, tolerance: float) -> bool:
    """Whether a numeric item with this answer and tolerance accepts `value`."""
    # A hair of slack so 0.1 + 0.2-style rounding never fails an exact answer.
    return abs(value - answer) <= tolerance + 1e-9 * max(1.0, abs(answer))


def content_hash(fields: dict[str, Any]) -> str:
    """Return a stable hash of a question's fields (what the sync compares)."""
    canonical = json.dumps(
        _json_safe(fields), sort_keys=True, ensure_ascii=False, separators=(",", ":")
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def presented_steps(question: Question) -> list[dict]:
    """Return an ordering question's steps in the (never solved) order shown."""
    steps = list(question.data["steps"])
    if len(steps) < 2:
        return steps
    # Seeded by the id, so a learner sees the same scramble on every device.
    seed = int(hashlib.sha256(question.id.encode("utf-8")).hexdigest()[:16], 16)
    shuffled = steps[:]
    random.Random(seed).shuffle(shuffled)
    if shuffled == steps:
        shuffled = shuffled[1:] + shuffled[:1]
    return shuffled
