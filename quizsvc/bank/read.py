"""Reading the bank's folders: lessons, skills, notes and questions, with every problem.

`validate`, `lint` and `load` read a bank folder; each file is a `SourceFile`
(`quizsvc.bank.source`), each question type has its reader
(`quizsvc.bank.items`, numeric answers in `quizsvc.bank.numeric`), and what
spans files (skills, notes, misconceptions, retired ids) is checked last.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from quizsvc.bank.ideas import IdeaSite, check_ideas, read_ideas
from quizsvc.bank.items import TYPE_KEYS, TYPE_READERS
from quizsvc.bank.lint import absolute_word_cue
from quizsvc.bank.model import (
    DEFAULT_PATH,
    DIFFICULTIES,
    LESSON_FILE,
    QUESTION_TYPES,
    Bank,
    BankError,
    Lesson,
    Note,
    Problem,
    Question,
    Skill,
    content_hash,
)
from quizsvc.bank.numeric import ATTENTION_QUANTITIES
from quizsvc.bank.source import SourceFile, display_path

__all__ = ["ATTENTION_QUANTITIES", "display_path", "lint", "load", "validate"]


@dataclass
class _Draft:
    """Everything read so far, with where each id was defined (for messages)."""

    problems: list[Problem] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)
    lessons: dict[str, Lesson] = field(default_factory=dict)
    skills: dict[str, Skill] = field(default_factory=dict)
    notes: dict[str, Note] = field(default_factory=dict)
    questions: dict[str, Question] = field(default_factory=dict)
    retired: dict[str, tuple[SourceFile, tuple]] = field(default_factory=dict)
    # id → (file, key path) of every question, for cross-reference messages.
    question_sites: dict[str, tuple[SourceFile, tuple]] = field(default_factory=dict)
    skill_sites: dict[str, tuple[SourceFile, tuple]] = field(default_factory=dict)
    lesson_sites: dict[str, tuple[SourceFile, tuple]] = field(default_factory=dict)
    prerequisites: list[tuple[str, str, dict | None, SourceFile, tuple]] = field(
        default_factory=list
    )
    idea_sites: list[IdeaSite] = field(default_factory=list)


def _lesson_folders(root: Path, draft: _Draft) -> list[Path]:
    if (root / LESSON_FILE).is_file():
        return [root]
    folders = []
    for child in sorted(root.iterdir()):
        if not child.is_dir() or child.name.startswith((".", "_")):
            continue
        if (child / LESSON_FILE).is_file():
            folders.append(child)
        else:
            draft.problems.append(
                Problem(
                    display_path(child),
                    1,
                    f"lesson folder without {LESSON_FILE}; add one or rename "
                    "the folder to start with '_' to ignore it",
                )
            )
    return folders


def validate(path: str | Path = DEFAULT_PATH) -> list[Problem]:
    """Return every problem of the bank at `path` (empty when it is valid)."""
    return _read(Path(path))[1]


def lint(path: str | Path = DEFAULT_PATH) -> list[Problem]:
    """Return the warnings about the bank at `path`: cues that let learners guess."""
    return _read(Path(path))[2]


def load(path: str | Path = DEFAULT_PATH) -> Bank:
    """Load the bank at `path` (the questions/ folder or one lesson folder)."""
    bank, problems, _ = _read(Path(path))
    if problems:
        raise BankError(problems)
    return bank


def _read(root: Path) -> tuple[Bank, list[Problem], list[Problem]]:
    draft = _Draft()
    if not root.is_dir():
        draft.problems.append(Problem(display_path(root), 1, "no such folder"))
        return _empty_bank(), draft.problems, draft.warnings
    folders = _lesson_folders(root, draft)
    if not folders and not draft.problems:
        draft.problems.append(
            Problem(
                display_path(root),
                1,
                f"no lessons found (expected <lesson>/{LESSON_FILE} folders)",
            )
        )
    for folder in folders:
        _read_lesson_folder(folder, draft)
    _check_references(draft)
    check_ideas(draft.idea_sites, draft.questions, draft.question_sites)
    _check_cues(draft)
    bank = Bank(
        lessons=draft.lessons,
        skills=draft.skills,
        notes=draft.notes,
        questions=draft.questions,
        retired_ids=frozenset(draft.retired),
    )
    return bank, draft.problems, draft.warnings


def _empty_bank() -> Bank:
    return Bank(lessons={}, skills={}, notes={}, questions={})


def _read_lesson_folder(folder: Path, draft: _Draft) -> None:
    lesson_file = SourceFile(
        folder / LESSON_FILE,
        display_path(folder / LESSON_FILE),
        draft.problems,
        draft.warnings,
    )
    if lesson_file.data is None:
        return
    lesson_id = _read_lesson(lesson_file, folder, draft)
    if lesson_id is None:
        return
    files = [lesson_file]
    for path in sorted(folder.glob("*.toml")):
        if path.name != LESSON_FILE:
            question_file = SourceFile(
                path, display_path(path), draft.problems, draft.warnings
            )
            if question_file.data is not None:
                question_file.keys(question_file.data, {"questions"}, ())
                files.append(question_file)
    for question_file in files:
        entries = question_file.table_list(question_file.data, "questions", ())
        for index, entry in enumerate(entries):
            _read_question(question_file, entry, ("questions", index), lesson_id, draft)


def _read_lesson(file: SourceFile, folder: Path, draft: _Draft) -> str | None:
    data = file.data
    file.keys(
        data,
        {
            "id",
            "number",
            "title",
            "summary",
            "prerequisites",
            "retired",
            "skills",
            "notes",
            "ideas",
            "questions",
        },
        (),
    )
    lesson_id = file.identifier(data, ())
    if lesson_id is None:
        return None
    if lesson_id != folder.name:
        file.report(
            ("id",),
            f"lesson id {lesson_id!r} must match its folder name {folder.name!r}",
        )
    if lesson_id in draft.lessons:
        other, where = draft.lesson_sites[lesson_id]
        file.report(
            ("id",),
            f"duplicate lesson id {lesson_id!r} (also in "
            f"{other.display}:{other.line(where)})",
        )
        return None
    number = data.get("number")
    if not isinstance(number, int) or isinstance(number, bool) or number < 0:
        file.report(
            ("number",),
            "number must be a whole number ≥ 0 (the lesson's number in the course)",
        )
        number = 0
    title = file.text(data, "title", ())
    summary = file.text(data, "summary", ())

    prerequisites = []
    for index, entry in enumerate(file.table_list(data, "prerequisites", ())):
        where = ("prerequisites", index)
        file.keys(entry, {"id", "title"}, where)
        prerequisite_id = file.identifier(entry, where)
        prerequisite_title = file.text(entry, "title", where, required=False)
        if prerequisite_id is not None:
            prerequisites.append(prerequisite_id)
            draft.prerequisites.append(
                (lesson_id, prerequisite_id, prerequisite_title, file, where)
            )

    retired = file.string_list(data, "retired", ()) or []
    for retired_id in retired:
        if retired_id in draft.retired:
            continue
        draft.retired[retired_id] = (file, ("retired",))

    skill_ids = []
    for index, entry in enumerate(file.table_list(data, "skills", ())):
        skill = _read_skill(file, entry, ("skills", index), lesson_id, index + 1, draft)
        if skill is not None:
            skill_ids.append(skill.id)
    if not skill_ids and "skills" not in data:
        file.report((), "a lesson needs at least one [[skills]] entry")

    seen_notes = set()
    for index, entry in enumerate(file.table_list(data, "notes", ())):
        where = ("notes", index)
        file.keys(entry, {"id", "title", "body"}, where)
        note_id = file.identifier(entry, where)
        note_title = file.text(entry, "title", where)
        body = file.text(entry, "body", where)
        if note_id is None:
            continue
        if note_id in draft.notes or note_id in seen_notes:
            file.report((*where, "id"), f"duplicate note id {note_id!r}")
            continue
        seen_notes.add(note_id)
        if note_title is not None and body is not None:
            draft.notes[note_id] = Note(note_id, lesson_id, note_title, body)

    ideas = read_ideas(file, data, lesson_id, draft.idea_sites)
    draft.lesson_sites[lesson_id] = (file, ("id",))
    if title is not None and summary is not None:
        draft.lessons[lesson_id] = Lesson(
            id=lesson_id,
            number=number,
            title=title,
            summary=summary,
            prerequisites=tuple(prerequisites),
            skill_ids=tuple(skill_ids),
            ideas=ideas,
        )
    return lesson_id


def _read_skill(
    file: SourceFile,
    entry: dict,
    where: tuple,
    lesson_id: str,
    order: int,
    draft: _Draft,
) -> Skill | None:
    file.keys(entry, {"id", "title", "can_do"}, where)
    skill_id = file.identifier(entry, where)
    title = file.text(entry, "title", where)
    can_do = file.text(entry, "can_do", where)
    if skill_id is None:
        return None
    if skill_id in draft.skills or skill_id in draft.skill_sites:
        other, other_where = draft.skill_sites[skill_id]
        file.report(
            (*where, "id"),
            f"duplicate skill id {skill_id!r} (also in "
            f"{other.display}:{other.line(other_where)})",
        )
        return None
    draft.skill_sites[skill_id] = (file, (*where, "id"))
    if title is None or can_do is None:
        return None
    skill = Skill(skill_id, lesson_id, order, title, can_do)
    draft.skills[skill_id] = skill
    return skill


_COMMON_QUESTION_KEYS = {
    "id",
    "type",
    "skills",
    "prompt",
    "explanation",
    "lesson_note",
    "difficulty",
}


def _read_question(
    file: SourceFile, entry: dict, where: tuple, lesson_id: str, draft: _Draft
) -> None:
    question_id = file.identifier(entry, where)
    kind = entry.get("type")
    if kind not in QUESTION_TYPES:
        file.report(
            (*where, "type"),
            f"type must be one of {', '.join(QUESTION_TYPES)}; got {kind!r}",
        )
        file.keys(entry, _COMMON_QUESTION_KEYS.union(*TYPE_KEYS.values()), where)
        return
    file.keys(entry, _COMMON_QUESTION_KEYS | TYPE_KEYS[kind], where)
    if question_id is not None:
        if question_id in draft.question_sites:
            other, other_where = draft.question_sites[question_id]
            file.report(
                (*where, "id"),
                f"duplicate question id {question_id!r} (also in "
                f"{other.display}:{other.line(other_where)})",
            )
            return
        draft.question_sites[question_id] = (file, (*where, "id"))

    skills = file.string_list(entry, "skills", where)
    if skills is not None and not skills:
        file.report(where, "missing 'skills' (a list of one or more skill ids)")
        skills = None
    if skills is not None and len(set(skills)) != len(skills):
        file.report((*where, "skills"), "skills lists the same skill twice")
    prompt = file.text(entry, "prompt", where)
    explanation = file.text(entry, "explanation", where)
    note = entry.get("lesson_note")
    if not isinstance(note, str) or not note:
        file.report(where, "missing 'lesson_note' (the id of the note to reopen)")
        note = None
    difficulty = entry.get("difficulty")
    if difficulty is not None and (
        isinstance(difficulty, bool) or difficulty not in DIFFICULTIES
    ):
        file.report(
            (*where, "difficulty"),
            f"difficulty must be 1, 2 or 3 (or left out); got {difficulty!r}",
        )
        difficulty = None

    reader = TYPE_READERS[kind]
    data = reader(file, entry, where, prompt)
    if None in (question_id, skills, prompt, explanation, note, data):
        return
    fields = {
        "id": question_id,
        "lesson_id": lesson_id,
        "type": kind,
        "skills": tuple(skills),
        "prompt": prompt,
        "explanation": explanation,
        "lesson_note": note,
        "difficulty": difficulty,
        "data": data,
    }
    draft.questions[question_id] = Question(**fields, content_hash=content_hash(fields))


def _check_references(draft: _Draft) -> None:
    """Check what spans files: skills, notes, misconceptions, retired ids."""
    try:
        from quizsvc.grading import MISCONCEPTIONS
    except ImportError as exc:
        MISCONCEPTIONS = None
        missing_grader = (
            f"cannot check misconceptions: quizsvc.grading does not import ({exc})"
        )
    used_skills: set[str] = set()
    for question_id, (file, where) in draft.question_sites.items():
        entry_where = where[:-1]
        question = draft.questions.get(question_id)
        if question_id in draft.retired:
            retired_file, retired_where = draft.retired[question_id]
            file.report(
                where,
                f"question id {question_id!r} was retired "
                f"({retired_file.display}:"
                f"{retired_file.line(retired_where)}); ids are never "
                "reused: pick a new one",
            )
            draft.questions.pop(question_id, None)
        if question is None:
            continue
        for skill_id in question.skills:
            if skill_id not in draft.skills and skill_id not in draft.skill_sites:
                file.report((*entry_where, "skills"), f"unknown skill {skill_id!r}")
                draft.questions.pop(question_id, None)
            used_skills.add(skill_id)
        if question.lesson_note not in draft.notes:
            file.report(
                (*entry_where, "lesson_note"), f"unknown note {question.lesson_note!r}"
            )
            draft.questions.pop(question_id, None)
        if question.type == "choice":
            for index, option in enumerate(question.data["options"]):
                name = option["misconception"]
                if name is not None and MISCONCEPTIONS is None:
                    file.report(
                        (*entry_where, "options", index, "misconception"),
                        missing_grader,
                    )
                    draft.questions.pop(question_id, None)
                elif name is not None and name not in MISCONCEPTIONS:
                    file.report(
                        (*entry_where, "options", index, "misconception"),
                        f"unknown misconception {name!r} (known: "
                        f"{', '.join(MISCONCEPTIONS)})",
                    )
                    draft.questions.pop(question_id, None)

    for skill_id, (file, where) in draft.skill_sites.items():
        if skill_id not in used_skills:
            file.report(
                where,
                f"skill {skill_id!r} has no questions yet; every "
                "skill needs at least one",
            )

    for lesson_id, prerequisite_id, title, file, where in draft.prerequisites:
        if prerequisite_id == lesson_id:
            file.report((*where, "id"), "a lesson cannot be its own prerequisite")
            continue
        known = draft.lessons.get(prerequisite_id)
        if known is None and title is None:
            file.report(
                where,
                f"prerequisite {prerequisite_id!r} is not in the bank, "
                "so it needs a title (zh-CN and en) to be shown",
            )
            continue
        lesson = draft.lessons.get(lesson_id)
        if lesson is not None:
            lesson.prerequisite_titles[prerequisite_id] = (
                title if title is not None else dict(known.title)
            )


def _check_cues(draft: _Draft) -> None:
    """Warn about cues that span a lesson's questions, at the lesson's id."""
    for lesson_id, (file, where) in draft.lesson_sites.items():
        options = [
            option
            for question in draft.questions.values()
            if question.lesson_id == lesson_id and question.type == "choice"
            for option in question.data["options"]
        ]
        for message in absolute_word_cue(options):
            file.warn(where, message)
