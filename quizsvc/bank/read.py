"""Reading the bank's TOML files and reporting every problem with its line."""

from __future__ import annotations

import math
import re
import tomllib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from quizsvc.bank.lint import (
    cloze_answer_in_prompt,
    guessable_choice,
    math_markup,
    mistakes_within_tolerance,
    punctuation,
)
from quizsvc.bank.locate import Locator
from quizsvc.bank.model import (
    DEFAULT_PATH,
    DIFFICULTIES,
    LANGUAGES,
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
    is_number,
)

# The engine quantities a numeric answer may be recomputed from, with the number
# of indices that pick one entry out of each (a single head, no batch axes).
ATTENTION_QUANTITIES = {
    "scores": 2,
    "exp_unshifted": 2,
    "exp": 2,
    "weights": 2,
    "output": 2,
    "row_max": 1,
    "denom": 1,
}

_ID_PATTERN = re.compile(r"^[a-z0-9][a-z0-9._-]{0,79}$")
_STEP_ID_PATTERN = re.compile(r"^[a-z0-9][a-z0-9_-]{0,39}$")
_BLANK = "___"


# --------------------------------------------------------------------------
# Reading and checking one file


class _File:
    """One TOML file being read: its display path, parsed data and problems."""

    def __init__(
        self,
        path: Path,
        display: str,
        problems: list[Problem],
        warnings: list[Problem] | None = None,
    ):
        self.path = path
        self.display = display
        self.problems = problems
        self.warnings = warnings if warnings is not None else []
        self.data: dict[str, Any] | None = None
        self.locator = Locator("")
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            self.report_line(1, f"the file is not UTF-8 text ({exc.reason})")
            return
        except OSError as exc:
            self.report_line(1, f"cannot read the file: {exc.strerror}")
            return
        self.locator = Locator(text)
        try:
            self.data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            message = str(exc)
            match = re.search(r"\(at line (\d+), column \d+\)", message)
            line = int(match.group(1)) if match else 1
            message = re.sub(
                r"\s*\(at (line \d+, column \d+|end of document)\)", "", message
            )
            self.report_line(line, f"invalid TOML: {message}")

    def report_line(self, line: int, message: str) -> None:
        self.problems.append(Problem(self.display, line, message))

    def warn(self, where: Sequence[str | int], message: str) -> None:
        """Note a cue or a doubt that does not make the bank invalid."""
        self.warnings.append(Problem(self.display, self.line(where), message))

    def report(self, where: Sequence[str | int], message: str) -> None:
        self.report_line(self.locator.line(where), message)

    def line(self, where: Sequence[str | int]) -> int:
        return self.locator.line(where)

    # Typed getters: each reports a problem and returns None on bad data.

    def keys(self, table: dict, allowed: Iterable[str], where: tuple) -> None:
        allowed = set(allowed)
        for key in table:
            if key not in allowed:
                self.report(
                    (*where, key),
                    f"unknown key {key!r} (allowed here: {', '.join(sorted(allowed))})",
                )

    def identifier(self, table: dict, where: tuple, key: str = "id") -> str | None:
        value = table.get(key)
        if value is None:
            self.report(where, f"missing {key!r}")
            return None
        if not isinstance(value, str) or not _ID_PATTERN.match(value):
            self.report(
                (*where, key),
                f"{key} {value!r} must be lowercase letters, digits, '.', '_' or '-' "
                "(starting with a letter or digit, at most 80 characters)",
            )
            return None
        return value

    def text(
        self, table: dict, key: str, where: tuple, required: bool = True
    ) -> dict | None:
        value = table.get(key)
        if value is None:
            if required:
                self.report(where, f"missing {key!r} (a table with zh-CN and en)")
            return None
        return self.bilingual(value, (*where, key), key)

    def bilingual(self, value: Any, where: tuple, label: str) -> dict | None:
        if not isinstance(value, dict):
            self.report(
                where,
                f"{label} must be a table with the keys zh-CN and en, "
                f'e.g. {label} = {{ zh-CN = "…", en = "…" }}',
            )
            return None
        ok = True
        for language in LANGUAGES:
            text = value.get(language)
            if text is None:
                self.report(where, f"{label} is missing the language {language}")
                ok = False
            elif not isinstance(text, str) or not text.strip():
                self.report(
                    (*where, language), f"{label}.{language} must be non-empty text"
                )
                ok = False
        for language in value:
            if language not in LANGUAGES:
                self.report(
                    (*where, language),
                    f"{label} has an unknown language key {language!r} "
                    "(expected zh-CN and en)",
                )
                ok = False
        if not ok:
            return None
        texts = {language: value[language].strip() for language in LANGUAGES}
        for language, text in texts.items():
            for message in punctuation(text, language) + math_markup(text):
                self.report((*where, language), f"{label}.{language}: {message}")
        return texts

    def string_list(self, table: dict, key: str, where: tuple) -> list[str] | None:
        value = table.get(key)
        if value is None:
            return []
        if not isinstance(value, list) or not all(
            isinstance(item, str) and item.strip() for item in value
        ):
            self.report((*where, key), f"{key} must be a list of non-empty strings")
            return None
        return value

    def table_list(self, table: dict, key: str, where: tuple) -> list[dict]:
        value = table.get(key, [])
        if not isinstance(value, list) or not all(isinstance(x, dict) for x in value):
            self.report(
                (*where, key), f"{key} must be an array of tables ([[{key}]] sections)"
            )
            return []
        return value


@dataclass
class _Draft:
    """Everything read so far, with where each id was defined (for messages)."""

    problems: list[Problem] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)
    lessons: dict[str, Lesson] = field(default_factory=dict)
    skills: dict[str, Skill] = field(default_factory=dict)
    notes: dict[str, Note] = field(default_factory=dict)
    questions: dict[str, Question] = field(default_factory=dict)
    retired: dict[str, tuple[_File, tuple]] = field(default_factory=dict)
    # id → (file, key path) of every question, for cross-reference messages.
    question_sites: dict[str, tuple[_File, tuple]] = field(default_factory=dict)
    skill_sites: dict[str, tuple[_File, tuple]] = field(default_factory=dict)
    lesson_sites: dict[str, tuple[_File, tuple]] = field(default_factory=dict)
    prerequisites: list[tuple[str, str, dict | None, _File, tuple]] = field(
        default_factory=list
    )


def display_path(path: Path) -> str:
    """Return `path` relative to the working folder when it is inside it."""
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


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
    lesson_file = _File(
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
            question_file = _File(
                path, display_path(path), draft.problems, draft.warnings
            )
            if question_file.data is not None:
                question_file.keys(question_file.data, {"questions"}, ())
                files.append(question_file)
    for question_file in files:
        entries = question_file.table_list(question_file.data, "questions", ())
        for index, entry in enumerate(entries):
            _read_question(question_file, entry, ("questions", index), lesson_id, draft)


def _read_lesson(file: _File, folder: Path, draft: _Draft) -> str | None:
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

    draft.lesson_sites[lesson_id] = (file, ("id",))
    if title is not None and summary is not None:
        draft.lessons[lesson_id] = Lesson(
            id=lesson_id,
            number=number,
            title=title,
            summary=summary,
            prerequisites=tuple(prerequisites),
            skill_ids=tuple(skill_ids),
        )
    return lesson_id


def _read_skill(
    file: _File, entry: dict, where: tuple, lesson_id: str, order: int, draft: _Draft
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
_TYPE_KEYS = {
    "choice": {"multiple", "options"},
    "numeric": {"answer", "tolerance", "attention"},
    "cloze": {"accepted"},
    "recall": {"model_answer", "key_points"},
    "ordering": {"steps"},
    "generated": {"kind", "level"},
}


def _read_question(
    file: _File, entry: dict, where: tuple, lesson_id: str, draft: _Draft
) -> None:
    question_id = file.identifier(entry, where)
    kind = entry.get("type")
    if kind not in QUESTION_TYPES:
        file.report(
            (*where, "type"),
            f"type must be one of {', '.join(QUESTION_TYPES)}; got {kind!r}",
        )
        file.keys(entry, _COMMON_QUESTION_KEYS.union(*_TYPE_KEYS.values()), where)
        return
    file.keys(entry, _COMMON_QUESTION_KEYS | _TYPE_KEYS[kind], where)
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

    reader = _TYPE_READERS[kind]
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


def _read_choice(file: _File, entry: dict, where: tuple, prompt) -> dict | None:
    multiple = entry.get("multiple", False)
    if not isinstance(multiple, bool):
        file.report((*where, "multiple"), "multiple must be true or false")
        return None
    options_raw = entry.get("options")
    if not isinstance(options_raw, list) or len(options_raw) < 2:
        file.report(where, "a choice question needs at least two [[questions.options]]")
        return None
    options, ids, ok = [], set(), True
    for index, option in enumerate(options_raw):
        at = (*where, "options", index)
        if not isinstance(option, dict):
            file.report(at, "each option must be a table")
            ok = False
            continue
        file.keys(option, {"id", "text", "correct", "why", "misconception"}, at)
        option_id = option.get("id")
        if not isinstance(option_id, str) or not _STEP_ID_PATTERN.match(option_id):
            file.report(
                (*at, "id"), 'option id must be short lowercase text such as "a"'
            )
            ok = False
        elif option_id in ids:
            file.report((*at, "id"), f"duplicate option id {option_id!r}")
            ok = False
        ids.add(option_id)
        correct = option.get("correct", False)
        if not isinstance(correct, bool):
            file.report((*at, "correct"), "correct must be true or false")
            ok = False
        text = file.text(option, "text", at)
        # A distractor must say why it is wrong: that is what the learner reads.
        why = file.text(option, "why", at, required=not correct)
        misconception = option.get("misconception")
        if misconception is not None:
            if correct:
                file.report(
                    (*at, "misconception"),
                    "only a wrong option can name a misconception",
                )
                ok = False
            elif not isinstance(misconception, str):
                file.report((*at, "misconception"), "misconception must be a name")
                ok = False
        if text is None or (why is None and not correct):
            ok = False
        options.append(
            {
                "id": option_id,
                "text": text,
                "correct": correct is True,
                "why": why,
                "misconception": misconception,
            }
        )
    if not ok:
        return None
    correct_count = sum(option["correct"] for option in options)
    if not multiple and correct_count != 1:
        file.report(
            (*where, "options"),
            f"a single-answer choice question needs exactly one option with "
            f"correct = true; found {correct_count} (set multiple = true for "
            "select-all-that-apply)",
        )
        return None
    if multiple and correct_count == 0:
        file.report(
            (*where, "options"),
            "a multiple-answer choice question needs at least one option "
            "with correct = true",
        )
        return None
    if correct_count == len(options):
        file.report(
            (*where, "options"),
            "every option is correct: add at least one wrong option",
        )
        return None
    first_correct = next(i for i, option in enumerate(options) if option["correct"])
    for message in guessable_choice(options, multiple):
        file.warn((*where, "options", first_correct, "text"), message)
    return {"multiple": multiple, "options": options}


def _read_numeric(file: _File, entry: dict, where: tuple, prompt) -> dict | None:
    answer = entry.get("answer")
    tolerance = entry.get("tolerance")
    ok = True
    if not is_number(answer) or not math.isfinite(answer):
        file.report(
            (*where, "answer") if "answer" in entry else where,
            "a numeric question needs a finite number as 'answer'",
        )
        ok = False
    if not is_number(tolerance) or not (0 <= tolerance < math.inf):
        file.report(
            (*where, "tolerance") if "tolerance" in entry else where,
            "a numeric question needs 'tolerance' (an absolute margin ≥ 0)",
        )
        ok = False
    if not ok:
        return None
    data = {"answer": float(answer), "tolerance": float(tolerance), "attention": None}
    if "attention" in entry:
        spec = _read_attention_spec(file, entry["attention"], (*where, "attention"))
        if spec is None:
            return None
        computed = _compute(spec)
        if isinstance(computed, str):
            file.report((*where, "attention"), computed)
            return None
        # Half the tolerance: then the exact value and everything near it pass.
        if abs(computed - answer) > tolerance / 2 + 1e-12:
            file.report(
                (*where, "answer"),
                f"answer {answer!r} disagrees with the engine: {spec['quantity']}"
                f"{spec['index']} = {computed:.6g} (allowed gap: tolerance/2 = "
                f"{tolerance / 2:g})",
            )
            return None
        data["attention"] = spec
        for message in mistakes_within_tolerance(spec, answer, tolerance):
            file.warn((*where, "attention"), message)
    return data


def _read_attention_spec(file: _File, spec: Any, where: tuple) -> dict | None:
    if not isinstance(spec, dict):
        file.report(where, "attention must be a table ([questions.attention])")
        return None
    file.keys(
        spec,
        {"q", "k", "v", "mask", "causal", "scale", "temperature", "quantity", "index"},
        where,
    )
    result: dict[str, Any] = {}
    for name in ("q", "k", "v", "mask"):
        if name not in spec:
            if name != "mask":
                file.report(where, f"attention needs the matrix {name!r}")
                return None
            result[name] = None
            continue
        matrix = spec[name]
        if not (
            isinstance(matrix, list)
            and matrix
            and all(isinstance(row, list) and row for row in matrix)
            and all(is_number(x) for row in matrix for x in row)
        ):
            file.report(
                (*where, name), f"{name} must be a matrix: a list of rows of numbers"
            )
            return None
        result[name] = [[float(x) for x in row] for row in matrix]
    for flag, default in (("causal", False),):
        value = spec.get(flag, default)
        if not isinstance(value, bool):
            file.report((*where, flag), f"{flag} must be true or false")
            return None
        result[flag] = value
    for number_key, default in (("scale", None), ("temperature", 1.0)):
        value = spec.get(number_key, default)
        if value is not None and not is_number(value):
            file.report((*where, number_key), f"{number_key} must be a number")
            return None
        result[number_key] = None if value is None else float(value)
    quantity = spec.get("quantity")
    if quantity not in ATTENTION_QUANTITIES:
        file.report(
            (*where, "quantity"),
            f"quantity must be one of {', '.join(ATTENTION_QUANTITIES)}; "
            f"got {quantity!r}",
        )
        return None
    index = spec.get("index")
    if not (
        isinstance(index, list)
        and len(index) == ATTENTION_QUANTITIES[quantity]
        and all(
            isinstance(i, int) and not isinstance(i, bool) and i >= 0 for i in index
        )
    ):
        file.report(
            (*where, "index"),
            f"index must list {ATTENTION_QUANTITIES[quantity]} position(s) ≥ 0 "
            f"(0-based) into {quantity}",
        )
        return None
    result["quantity"] = quantity
    result["index"] = index
    return result


def _compute(spec: dict) -> float | str:
    """Recompute one entry with the engine; a string says what went wrong."""
    from quizsvc.engine import AttentionInputError, attention

    try:
        trace = attention(
            spec["q"],
            spec["k"],
            spec["v"],
            mask=spec["mask"],
            causal=spec["causal"],
            scale=spec["scale"],
            temperature=spec["temperature"],
        )
    except AttentionInputError as exc:
        return f"the engine refuses these inputs: {exc}"
    quantity = spec["quantity"]
    array = (
        trace.exp_unshifted()
        if quantity == "exp_unshifted"
        else getattr(trace, quantity)
    )
    index = tuple(spec["index"])
    if any(i >= n for i, n in zip(index, array.shape, strict=True)):
        return f"index {list(index)} is outside {quantity} of shape {array.shape}"
    value = float(array[index])
    if not math.isfinite(value):
        return f"{quantity}{list(index)} is {value}, not a finite number"
    return value


def _read_cloze(file: _File, entry: dict, where: tuple, prompt) -> dict | None:
    accepted = file.string_list(entry, "accepted", where)
    if accepted is None:
        return None
    if not accepted:
        file.report(
            where,
            "a cloze question needs 'accepted' (the answers that count, at least one)",
        )
        return None
    if prompt is not None:
        for language in LANGUAGES:
            if _BLANK not in prompt[language]:
                file.report(
                    (*where, "prompt", language),
                    f"the {language} prompt of a cloze question needs a "
                    f"blank written as {_BLANK}",
                )
        for language, message in cloze_answer_in_prompt(prompt, accepted):
            file.warn((*where, "prompt", language), message)
    return {"accepted": list(accepted)}


def _read_recall(file: _File, entry: dict, where: tuple, prompt) -> dict | None:
    model_answer = file.text(entry, "model_answer", where)
    key_points = []
    raw = entry.get("key_points", [])
    if not isinstance(raw, list):
        file.report(
            (*where, "key_points"),
            "key_points must be a list of { zh-CN = …, en = … } tables",
        )
        return None
    for index, point in enumerate(raw):
        checked = file.bilingual(point, (*where, "key_points"), f"key_points[{index}]")
        if checked is None:
            return None
        key_points.append(checked)
    if model_answer is None:
        return None
    return {"model_answer": model_answer, "key_points": key_points}


def _read_ordering(file: _File, entry: dict, where: tuple, prompt) -> dict | None:
    raw = entry.get("steps")
    if not isinstance(raw, list) or len(raw) < 3:
        file.report(
            where,
            "an ordering question needs at least three "
            "[[questions.steps]], listed in the correct order",
        )
        return None
    steps, ids = [], set()
    for index, step in enumerate(raw):
        at = (*where, "steps", index)
        if not isinstance(step, dict):
            file.report(at, "each step must be a table")
            return None
        file.keys(step, {"id", "text"}, at)
        step_id = step.get("id")
        if not isinstance(step_id, str) or not _STEP_ID_PATTERN.match(step_id):
            file.report(
                (*at, "id"), 'step id must be short lowercase text such as "scores"'
            )
            return None
        if step_id in ids:
            file.report((*at, "id"), f"duplicate step id {step_id!r}")
            return None
        ids.add(step_id)
        text = file.text(step, "text", at)
        if text is None:
            return None
        steps.append({"id": step_id, "text": text})
    return {"steps": steps}


def _read_generated(file: _File, entry: dict, where: tuple, prompt) -> dict | None:
    try:
        from quizsvc.problems import KINDS, LEVELS
    except ImportError as exc:
        file.report(
            where,
            f"cannot check the problem kind: quizsvc.problems does not import ({exc})",
        )
        return None
    kind = entry.get("kind")
    level = entry.get("level")
    ok = True
    if kind not in KINDS:
        file.report(
            (*where, "kind") if "kind" in entry else where,
            f"unknown problem kind {kind!r} (known: {', '.join(KINDS)})",
        )
        ok = False
    if isinstance(level, bool) or level not in LEVELS:
        file.report(
            (*where, "level") if "level" in entry else where,
            f"unknown problem level {level!r} (known: "
            f"{', '.join(str(x) for x in LEVELS)})",
        )
        ok = False
    return {"kind": kind, "level": level} if ok else None


_TYPE_READERS = {
    "choice": _read_choice,
    "numeric": _read_numeric,
    "cloze": _read_cloze,
    "recall": _read_recall,
    "ordering": _read_ordering,
    "generated": _read_generated,
}


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
