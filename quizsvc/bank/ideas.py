"""A lesson's ideas and the questions that exercise each: the coverage map.

`lesson.toml` may list ``[[ideas]]``, each with an id, its text in both
languages and the ids of the questions that exercise it. Where a lesson has
ideas, `validate` refuses an idea that names an unknown question, and `lint`
warns about an idea with fewer than `MIN_QUESTIONS` questions or fewer than
`MIN_TYPES` question types, and about a question of the lesson that no idea
names. `coverage` returns the table `quizsvc questions coverage` prints.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from quizsvc.bank.model import Idea, Question
from quizsvc.bank.source import SourceFile

MIN_QUESTIONS = 4
MIN_TYPES = 2


@dataclass(frozen=True)
class IdeaSite:
    """Where an idea was read, for messages."""

    lesson_id: str
    idea: Idea
    file: SourceFile
    where: tuple


@dataclass(frozen=True)
class Coverage:
    """How well one idea is exercised."""

    idea: Idea
    questions: tuple[Question, ...]
    types: dict[str, int]

    @property
    def thin(self) -> bool:
        """Whether the idea has too few questions or question types."""
        return len(self.questions) < MIN_QUESTIONS or len(self.types) < MIN_TYPES


def read_ideas(
    file: SourceFile, data: dict, lesson_id: str, sites: list[IdeaSite]
) -> tuple[Idea, ...]:
    """Read the lesson's [[ideas]]; each is checked against the questions later."""
    ideas, seen = [], set()
    for index, entry in enumerate(file.table_list(data, "ideas", ())):
        where = ("ideas", index)
        file.keys(entry, {"id", "text", "questions"}, where)
        idea_id = file.identifier(entry, where)
        text = file.text(entry, "text", where)
        question_ids = file.string_list(entry, "questions", where)
        if idea_id is None or text is None or question_ids is None:
            continue
        if idea_id in seen:
            file.report((*where, "id"), f"duplicate idea id {idea_id!r}")
            continue
        seen.add(idea_id)
        idea = Idea(idea_id, text, tuple(question_ids))
        ideas.append(idea)
        sites.append(IdeaSite(lesson_id, idea, file, where))
    return tuple(ideas)


def check_ideas(
    sites: Sequence[IdeaSite],
    questions: Mapping[str, Question],
    question_sites: Mapping[str, tuple[SourceFile, tuple]],
) -> None:
    """Report unknown questions in ideas; warn about thin ideas and unmapped items."""
    mapped: dict[str, set[str]] = {}
    for site in sites:
        at = (*site.where, "questions")
        unknown = [q for q in site.idea.question_ids if q not in question_sites]
        for question_id in unknown:
            site.file.report(
                at, f"idea {site.idea.id!r}: unknown question {question_id!r}"
            )
        mapped.setdefault(site.lesson_id, set()).update(site.idea.question_ids)
        found = coverage_of(site.idea, questions)
        if found.thin:
            types = (
                ", ".join(f"{kind} {n}" for kind, n in found.types.items()) or "none"
            )
            site.file.warn(
                at,
                f"idea {site.idea.id!r} has {len(found.questions)} question(s) of "
                f"{len(found.types)} type(s) ({types}); an idea needs at least "
                f"{MIN_QUESTIONS} questions of at least {MIN_TYPES} types",
            )
    for question_id, (file, where) in question_sites.items():
        question = questions.get(question_id)
        if question is None or question.lesson_id not in mapped:
            continue
        if question_id not in mapped[question.lesson_id]:
            file.warn(
                where,
                f"question {question_id!r} exercises none of the lesson's ideas; "
                "add it to the questions of the idea it practises (lesson.toml)",
            )


def coverage_of(idea: Idea, questions: Mapping[str, Question]) -> Coverage:
    """Return the questions and question types that exercise `idea`."""
    found = tuple(questions[q] for q in idea.question_ids if q in questions)
    types: dict[str, int] = {}
    for question in found:
        types[question.type] = types.get(question.type, 0) + 1
    return Coverage(idea, found, dict(sorted(types.items())))


def coverage(
    ideas: Sequence[Idea], questions: Mapping[str, Question]
) -> list[Coverage]:
    """Return each idea's coverage, in the lesson's order."""
    return [coverage_of(idea, questions) for idea in ideas]
