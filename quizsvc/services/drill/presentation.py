"""How the drill's items and outcomes are shown: the open item as the learner
may see it, a pending explanation, a finished day, and a verdict redacted
until the learner has explained a wrong answer."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from quizsvc import bank as bank_module
from quizsvc import problems
from quizsvc.models import Item, OpenItem, Review


def question_of(item: Item) -> bank_module.Question:
    """Rebuild the bank question stored (at sync time) in an item row."""
    content = item.content
    return bank_module.Question(
        id=content["id"],
        lesson_id=content["lesson_id"],
        type=content["type"],
        skills=tuple(content["skills"]),
        prompt=content["prompt"],
        explanation=content["explanation"],
        lesson_note=content["lesson_note"],
        difficulty=content.get("difficulty"),
        data=content["data"],
        content_hash=content["content_hash"],
    )


@dataclass(frozen=True)
class OpenDrillItem:
    """The item the learner is answering, as they may see it."""

    item: Item
    question: bank_module.Question
    problem: problems.Problem | None
    position: int
    total: int
    # A learning-step repeat of an item answered earlier today: it does not
    # move the day's position.
    repeat: bool = False

    def public_dict(self, lang: str | None = None) -> dict[str, Any]:
        """What the client may show: never the answer, never the note."""
        public = self.question.public_dict(lang)
        public.pop("id", None)
        data: dict[str, Any] = {
            "item_id": self.item.id,
            **public,
            "note_id": self.question.lesson_note,
            "position": self.position,
            "total": self.total,
            "repeat": self.repeat,
        }
        if self.problem is not None:
            # Without its seed the problem cannot be named to the practice
            # checker (which would answer it) from outside the learner's session.
            problem = self.problem.public_dict(lang)
            problem.pop("seed", None)
            data["problem"] = problem
        return data


@dataclass(frozen=True)
class PendingExplanation:
    """A wrong answer the learner has not yet explained."""

    review: Review

    def public_dict(self) -> dict[str, Any]:
        return {
            "requires_explanation": True,
            "review_id": self.review.id,
            "item_id": self.review.item_id,
        }


@dataclass(frozen=True)
class Done:
    """Nothing is due: when the next review comes due."""

    next_due: datetime | None
    reviewed_today: int

    def public_dict(self) -> dict[str, Any]:
        return {
            "done": True,
            "reviewed_today": self.reviewed_today,
            "next_due": self.next_due.isoformat() if self.next_due else None,
        }


DrillStep = OpenDrillItem | PendingExplanation | Done


def problem_of_open(opened: OpenItem) -> problems.Problem | None:
    if opened.problem_kind is None:
        return None
    return problems.generate(
        opened.problem_kind, int(opened.problem_seed), int(opened.problem_level)
    )


# What a generated problem's step may say before the explanation: whether it
# was right, never the cells (a boolean matrix marked cell by cell is its answer).
_STEP_BEFORE_EXPLANATION = ("name", "answered", "correct", "score")
# What the learner gave, kept from a bank check's detail.
_OWN_ANSWER = ("chosen", "order", "value", "normalized")


def redacted(verdict: dict[str, Any]) -> dict[str, Any]:
    """A verdict before the explanation: what the learner gave and which parts
    were wrong, but not the right answer, the misconception or why."""
    kept: dict[str, Any] = {
        key: verdict[key]
        for key in ("type", "correct", "score", "self_rating")
        if key in verdict
    }
    detail = verdict.get("detail")
    if isinstance(detail, dict):
        kept.update({key: detail[key] for key in _OWN_ANSWER if key in detail})
    if isinstance(verdict.get("steps"), list):
        kept["steps"] = [
            {key: step.get(key) for key in _STEP_BEFORE_EXPLANATION}
            for step in verdict["steps"]
        ]
    return kept


def reveal(question: bank_module.Question, lang: str | None = None) -> dict[str, Any]:
    """The explanation, the model answer and the note id, for after an answer."""
    pick = (
        (lambda text: text)
        if lang is None
        else (lambda text: text.get(lang) or text.get("zh-CN"))
    )
    data: dict[str, Any] = {
        "explanation": pick(question.explanation),
        "note_id": question.lesson_note,
    }
    if question.type == "recall":
        data["model_answer"] = pick(question.data["model_answer"])
        data["key_points"] = [pick(point) for point in question.data["key_points"]]
    return data
