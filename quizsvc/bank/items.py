"""Reading the keys of each question type, one reader per type.

Each reader takes the file, the question's table, its key path and its
already-read prompt; it reports problems at their lines and returns the
type's `data` (None when the question cannot be used).
"""

from __future__ import annotations

import re

from quizsvc.bank.lint import (
    cloze_answer_in_prompt,
    guessable_choice,
    option_ids_out_of_order,
)
from quizsvc.bank.model import LANGUAGES
from quizsvc.bank.numeric import read_numeric
from quizsvc.bank.source import SourceFile

_STEP_ID_PATTERN = re.compile(r"^[a-z0-9][a-z0-9_-]{0,39}$")
_BLANK = "___"

# The keys each type adds to the keys every question has.
TYPE_KEYS = {
    "choice": {"multiple", "options"},
    "numeric": {"answer", "tolerance", "attention", "exact", "near_misses"},
    "cloze": {"accepted"},
    "recall": {"model_answer", "key_points"},
    "ordering": {"steps"},
    "generated": {"kind", "level"},
}


def _read_choice(file: SourceFile, entry: dict, where: tuple, prompt) -> dict | None:
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
    for message in option_ids_out_of_order(options):
        file.warn((*where, "options"), message)
    return {"multiple": multiple, "options": options}


def _read_cloze(file: SourceFile, entry: dict, where: tuple, prompt) -> dict | None:
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


def _read_recall(file: SourceFile, entry: dict, where: tuple, prompt) -> dict | None:
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


def _read_ordering(file: SourceFile, entry: dict, where: tuple, prompt) -> dict | None:
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


def _read_generated(file: SourceFile, entry: dict, where: tuple, prompt) -> dict | None:
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


TYPE_READERS = {
    "choice": _read_choice,
    "numeric": read_numeric,
    "cloze": _read_cloze,
    "recall": _read_recall,
    "ordering": _read_ordering,
    "generated": _read_generated,
}
