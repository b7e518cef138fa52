"""What every item type answers to, and the pieces the types share.

An item type is one class (after CTFd's challenge classes): it knows how an
answer of its kind is read from a form and from JSON, checked, stored, redacted
while the learner still has to explain a wrong answer, revealed after, and
shown to people. Nothing outside quizsvc.item_types branches on a type's name.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from quizsvc import grading, problems, scheduling
from quizsvc.bank import Question
from quizsvc.errors import N_, BadRequest, Message
from quizsvc.text import LANGUAGES, Bilingual, pick


@dataclass(frozen=True)
class Graded:
    """One answer, checked: what to store and what the scheduler is told."""

    verdict: dict[str, Any]
    graded: scheduling.GradedAnswer | None = None
    self_rating: scheduling.Rating | None = None
    misconception: str | None = None
    problem: problems.Problem | None = None
    grading_verdict: grading.Verdict | None = None


class AnswerRefused(BadRequest):
    """An answer that is not an attempt: it costs the learner nothing."""

    field = "answer"


class UnreadableAnswer(AnswerRefused):
    """The answer could not be read (a typo, a step left out, a blank)."""

    code = "format_error"
    # (ask, row, column) of each unreadable entry of a generated problem.
    fields: tuple[tuple[str, int | None, int | None], ...] = ()

    @classmethod
    def of(
        cls,
        remarks: list[Bilingual],
        fields: list[tuple[str, int | None, int | None]] | None = None,
    ) -> UnreadableAnswer:
        """Build the error from bilingual remarks (the grader's, the checker's)."""
        error = cls(
            content={
                lang: " ".join(pick(remark, lang) for remark in remarks)
                for lang in LANGUAGES
            }
        )
        error.fields = tuple(fields or ())
        return error


class RatingRefused(AnswerRefused):
    """A recall rating that is not one of the learner's buttons."""

    field = "rating"

    def __init__(self, two_button: bool):
        message = (
            N_("Rate yourself: pass or fail.")
            if two_button
            else N_("Rate yourself: again, hard, good or easy.")
        )
        super().__init__(Message(message))
        self.two_button = two_button


def pick_text(text: Mapping[str, str], lang: str | None) -> Any:
    """A bank text in `lang` (zh-CN when missing); the whole mapping for None."""
    if lang is None:
        return dict(text)
    return text.get(lang) or text.get("zh-CN")


def separator(lang: str | None) -> str:
    """How a list of picked texts is joined in `lang`."""
    return "；" if lang in (None, "zh-CN") else "; "


class ItemType:
    """The defaults; each type overrides what is its own."""

    name = ""
    # Checked by the bank's checker (quizsvc.bank.check_answer).
    checkable = False
    # Rated by the learner (no checker): the answer is a private note.
    self_rated = False
    # Stored answers that are JSON (a list, a mapping), not text as typed.
    json_answer = False
    # What a bank check's detail keeps before the explanation: the learner's own.
    own_answer_keys: tuple[str, ...] = ()

    # --- before the answer -------------------------------------------------

    def public_fields(self, question: Question, lang: str | None) -> dict[str, Any]:
        """The type's fields a learner may see while answering (never the answer)."""
        return {}

    def opening(self, question: Question) -> dict[str, Any]:
        """What opening the item stores beside it (a generated problem's seed)."""
        return {}

    def problem_for(self, opened: Any) -> problems.Problem | None:
        """The generated problem an opened item or a review names, if any."""
        return None

    # --- reading an answer -------------------------------------------------

    def read_form(
        self, question: Question, form: Any, problem: problems.Problem | None
    ) -> Any:
        """The answer from an HTML form, in the shape `grade` takes."""
        return form.get("answer", "").strip() or None

    def grade(
        self,
        question: Question,
        answer: Any,
        *,
        problem: problems.Problem | None = None,
        rating: str | None = None,
        two_button: bool = False,
    ) -> Graded:
        """Check an answer; raise AnswerRefused when it is not an attempt."""
        raise NotImplementedError

    def answer_text(self, answer: Any) -> str | None:
        """The answer as stored in the review log."""
        if answer is None:
            return None
        if isinstance(answer, str):
            return answer
        return json.dumps(answer, ensure_ascii=False)

    def stored_answer(self, text: str | None) -> Any:
        """The answer as the checker took it, read back from the review log."""
        if text is None or not self.json_answer:
            return text
        try:
            return json.loads(text)
        except ValueError:
            return text

    # --- after the answer --------------------------------------------------

    def redact(self, verdict: Mapping[str, Any]) -> dict[str, Any]:
        """A verdict before the explanation: what the learner gave and which parts
        were wrong, but not the right answer, the misconception or why."""
        kept = {
            key: verdict[key]
            for key in ("type", "correct", "score", "self_rating")
            if key in verdict
        }
        detail = verdict.get("detail")
        if isinstance(detail, Mapping):
            kept.update(
                {key: detail[key] for key in self.own_answer_keys if key in detail}
            )
        return kept

    def revealed_fields(self, question: Question, lang: str | None) -> dict[str, Any]:
        """The type's part of what opens after an answer (a model answer)."""
        return {}

    def result_fields(
        self,
        question: Question,
        verdict: Mapping[str, Any],
        text: str | None,
        lang: str,
        problem: problems.Problem | None = None,
    ) -> dict[str, Any]:
        """What the result page shows of a stored answer, from its stored verdict."""
        return {}

    def expected_lines(self, question: Question, lang: str) -> list[str]:
        """The right answer as text lines, in `lang`."""
        return []

    def readable(self, question: Question | None, text: str | None, lang: str) -> str:
        """A stored answer as a person reads it (option texts, not their ids)."""
        return text or ""

    def legacy_verdict(self, correct: bool | None, score: float | None, rating: int):
        """The verdict of a review stored before verdicts were kept: what the
        row says, never a new grade of its answer."""
        return {"type": self.name, "correct": correct, "score": score}

    # --- the CLI's preview -------------------------------------------------

    def preview(
        self,
        question: Question,
        lines: list[str],
        labels: Mapping[str, str],
        lang: str,
        seed: int,
    ) -> list[str]:
        """Add the type's part of a text preview to `lines`; return its answer."""
        return []


def quoted(text: Bilingual) -> dict[str, str]:
    """Put a bank text in quotation marks, in each language."""
    return {lang: f"“{pick(text, lang)}”" for lang in LANGUAGES}
