"""One class per item type, and the registry that finds it by name.

    item_type = item_types.of(question)        # or of("choice")
    graded = item_type.grade(question, answer, problem=..., rating=...)
    item_types.readable_answer(question, review.answer_text, "zh-CN")

Each bank item type (choice, numeric, cloze, recall, ordering, generated) owns
how its answers are read from a form and from JSON, checked, redacted while
the learner has a wrong answer to explain, revealed after, and shown to people
(option texts, matrices as rows, orderings as step texts). The rest of the app
asks the registry instead of branching on the type's name.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from quizsvc.bank import Question
from quizsvc.item_types.bank_types import Choice, Cloze, Numeric, Ordering, Recall
from quizsvc.item_types.base import (
    AnswerRefused,
    Graded,
    ItemType,
    RatingRefused,
    UnreadableAnswer,
    pick_text,
)
from quizsvc.item_types.generated import (
    Generated,
    collect_answers,
    labelled,
    plain_value,
)

__all__ = [
    "REGISTRY",
    "AnswerRefused",
    "Graded",
    "ItemType",
    "RatingRefused",
    "UnreadableAnswer",
    "collect_answers",
    "labelled",
    "of",
    "plain_value",
    "public_dict",
    "readable_answer",
    "redacted",
    "reveal",
]

REGISTRY: dict[str, ItemType] = {
    item_type.name: item_type
    for item_type in (Choice(), Numeric(), Cloze(), Recall(), Ordering(), Generated())
}


def of(question: Question | str) -> ItemType:
    """The item type of a question (or of a type's name)."""
    name = question if isinstance(question, str) else question.type
    try:
        return REGISTRY[name]
    except KeyError:
        raise ValueError(f"unknown item type {name!r}") from None


def public_dict(question: Question, lang: str | None = None) -> dict[str, Any]:
    """What a learner may see of a question before answering (never the answer)."""
    public: dict[str, Any] = {
        "id": question.id,
        "lesson_id": question.lesson_id,
        "type": question.type,
        "skills": list(question.skills),
        "difficulty": question.difficulty,
        "prompt": pick_text(question.prompt, lang),
    }
    public.update(of(question).public_fields(question, lang))
    return public


def redacted(verdict: Mapping[str, Any]) -> dict[str, Any]:
    """A stored verdict as it may be shown before the learner's explanation."""
    return of(str(verdict.get("type", "recall"))).redact(verdict)


def reveal(question: Question, lang: str | None = None) -> dict[str, Any]:
    """The explanation, the note id and the type's model answer, after an answer."""
    data: dict[str, Any] = {
        "explanation": pick_text(question.explanation, lang),
        "note_id": question.lesson_note,
    }
    data.update(of(question).revealed_fields(question, lang))
    return data


def readable_answer(question: Question | None, text: str | None, lang: str) -> str:
    """A stored answer as a person reads it, in `lang`: option texts, step
    texts in order, matrices as [[…],[…]] rows of plain numbers."""
    if question is None:
        return text or ""
    return of(question).readable(question, text, lang)
