"""How the drill's items and outcomes are shown: the open item as the learner
may see it, a pending explanation, a finished day, and a verdict redacted
until the learner has explained a wrong answer."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from quizsvc import bank as bank_module
from quizsvc import item_types, problems
from quizsvc.models import Item, OpenItem, Review


def question_of(item: Item) -> bank_module.Question:
    """Rebuild the bank question stored (at sync time) in an item row."""
    return bank_module.Question.from_dict(item.content)


@dataclass(frozen=True)
class OpenDrillItem:
    """The item the learner is answering, as they may see it."""

    item: Item
    question: bank_module.Question
    problem: problems.Problem | None
    position: int
    total: int
    # A learning-step repeat of an item answered earlier today.
    repeat: bool = False
    # A choice item's option ids as this presentation orders them.
    option_order: list[str] | None = None

    def public_dict(self, lang: str | None = None) -> dict[str, Any]:
        """What the client may show: never the answer, never the note."""
        public = item_types.public_dict(self.question, lang)
        public.pop("id", None)
        if self.option_order and "options" in public:
            public["options"] = in_order(public["options"], self.option_order)
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
    """Nothing to ask now: when to come back. With `steps_waiting`, learning
    steps of today wait for their spacing and `next_due` is when the first may
    be asked; without, the day is done and `next_due` is the next review."""

    next_due: datetime | None
    reviewed_today: int
    steps_waiting: int = 0

    @property
    def day_done(self) -> bool:
        """Whether nothing more is planned for today."""
        return self.steps_waiting == 0

    def public_dict(self) -> dict[str, Any]:
        return {
            "done": True,
            "day_done": self.day_done,
            "steps_waiting": self.steps_waiting,
            "reviewed_today": self.reviewed_today,
            "next_due": self.next_due.isoformat() if self.next_due else None,
        }


DrillStep = OpenDrillItem | PendingExplanation | Done


def in_order(options: list[dict[str, Any]], order: list[str]) -> list[dict[str, Any]]:
    """Options in a stored presentation order (any not named keep bank order,
    after the named ones: an option added to the bank since)."""
    rank = {option_id: index for index, option_id in enumerate(order)}
    return sorted(options, key=lambda o: rank.get(o["id"], len(rank)))


def problem_of_open(opened: OpenItem | Review) -> problems.Problem | None:
    """The generated problem an open item (or a review of one) names, if any."""
    if opened.problem_kind is None:
        return None
    return problems.generate(
        opened.problem_kind, int(opened.problem_seed), int(opened.problem_level)
    )


def redacted(
    verdict: dict[str, Any], problem: problems.Problem | None = None
) -> dict[str, Any]:
    """A verdict before the explanation: what the learner gave and which parts
    (cells of a matrix too) were wrong, but not the right answer, the
    misconception or why."""
    return item_types.redacted(verdict, problem)


def reveal(question: bank_module.Question, lang: str | None = None) -> dict[str, Any]:
    """The explanation, the model answer and the note id, for after an answer."""
    return item_types.reveal(question, lang)
