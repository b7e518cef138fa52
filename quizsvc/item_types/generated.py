"""The generated item type: a fresh attention problem per presentation, graded
step by step by quizsvc.grading, shown as matrices."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from quizsvc import grading, problems, scheduling
from quizsvc.errors import N_
from quizsvc.item_types.base import (
    AnswerRefused,
    Graded,
    ItemType,
    UnreadableAnswer,
    separator,
)
from quizsvc.parsing import parse_matrix, parse_value

MATRIX_FORMATS = ("matrix", "boolean_matrix")
# What a generated problem's step may say before the explanation: whether it
# was right, never the cells (a boolean matrix marked cell by cell is its answer).
STEP_BEFORE_EXPLANATION = ("name", "answered", "correct", "score")


def collect_answers(form: Any, asks: list[dict[str, Any]]) -> dict[str, Any]:
    """Return {ask name: typed answer} for the asks a form filled in.

    The form names are `cell-<ask>-<row>-<col>` for each grid cell,
    `paste-<ask>` for a whole matrix pasted at once (it wins when filled) and
    `answer-<ask>` for numbers, choices and shapes. The grader parses what
    people type; this only gathers it, so a blank cell reaches the grader and
    is reported by position.
    """
    answers: dict[str, Any] = {}
    for ask in asks:
        name = ask["name"]
        if ask["format"] in MATRIX_FORMATS:
            pasted = form.get(f"paste-{name}", "").strip()
            if pasted:
                answers[name] = pasted
                continue
            rows, cols = ask["shape"]
            cells = [
                [form.get(f"cell-{name}-{i}-{j}", "").strip() for j in range(cols)]
                for i in range(rows)
            ]
            if ask["format"] == "boolean_matrix":
                # Checkboxes send nothing when unchecked: absent means "hidden".
                answers[name] = [
                    ["1" if cell else "0" for cell in row] for row in cells
                ]
            elif any(cell for row in cells for cell in row):
                answers[name] = cells
        else:
            value = form.get(f"answer-{name}", "").strip()
            if value:
                answers[name] = value
    return answers


def labelled(error: grading.FormatError, label: Any) -> dict[str, str]:
    """A format error's message with the step named as the learner sees it
    (its label, e.g. "A′ = softmax(S + c)") instead of its internal name."""
    message = dict(error.message)
    if not isinstance(label, Mapping):
        return message
    for lang, text in message.items():
        for mark in ("：", ": "):
            prefix = f"{error.quantity}{mark}"
            if text.startswith(prefix) and label.get(lang):
                message[lang] = f"{label[lang]}{mark}{text[len(prefix) :]}"
    return message


def plain_number(value: float) -> str:
    """A number as people write it: 4, 0.7071, -inf (no trailing zeros)."""
    if math.isnan(value):
        return "undefined"
    if math.isinf(value):
        return "-inf" if value < 0 else "inf"
    if float(value).is_integer():
        return str(int(value))
    text = f"{value:.4f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def _plain_cell(cell: Any) -> str:
    try:
        return plain_number(parse_value(cell))
    except (ValueError, ArithmeticError):
        return str(cell).strip()


def plain_value(typed: Any) -> str:
    """One typed answer as plain text: a matrix as [[…],[…]] rows of plain
    numbers (fullwidth digits, expressions and pasted prints read as the
    grader reads them); anything unreadable as it was typed."""
    if isinstance(typed, list):
        rows = typed if typed and all(isinstance(r, list) for r in typed) else [typed]
        return (
            "["
            + ", ".join(
                "[" + ", ".join(_plain_cell(c) for c in row) + "]" for row in rows
            )
            + "]"
        )
    if isinstance(typed, str) and any(mark in typed for mark in "[],;\n"):
        try:
            matrix = parse_matrix(typed, number=parse_value)
        except (ValueError, ArithmeticError):
            return typed.strip()
        return plain_value([[float(x) for x in row] for row in matrix.tolist()])
    return _plain_cell(typed)


class Generated(ItemType):
    name = "generated"
    json_answer = True

    def public_fields(self, question, lang):
        return {"kind": question.data["kind"], "level": question.data["level"]}

    def opening(self, question):
        return {
            "problem_kind": question.data["kind"],
            "problem_seed": problems.fresh_seed(),
            "problem_level": int(question.data["level"]),
        }

    def problem_for(self, opened):
        if opened is None or opened.problem_kind is None:
            return None
        return problems.generate(
            opened.problem_kind, int(opened.problem_seed), int(opened.problem_level)
        )

    def read_form(self, question, form, problem):
        return collect_answers(form, problem.public_dict()["ask"])

    def grade(self, question, answer, *, problem=None, rating=None, two_button=False):
        if answer is None or answer == "" or answer == {}:
            raise UnreadableAnswer(N_("Type an answer first."))
        if not isinstance(answer, dict):
            raise AnswerRefused(
                N_(
                    "A generated problem takes answers by name, e.g. "
                    '{"S": "[[0.7071, 0]]"}.'
                )
            )
        verdict = grading.grade(problem, answer)
        if verdict.format_errors:
            labels = {ask.name: ask.label for ask in problem.ask}
            raise UnreadableAnswer.of(
                [labelled(e, labels.get(e.quantity)) for e in verdict.format_errors],
                [(e.quantity, e.row, e.col) for e in verdict.format_errors],
            )
        return Graded(
            verdict={"type": self.name, **verdict.to_dict()},
            graded=scheduling.GradedAnswer(
                correct=verdict.correct, score=float(verdict.score)
            ),
            misconception=verdict.misconception,
            problem=problem,
            grading_verdict=verdict,
        )

    def redact(self, verdict):
        kept = super().redact(verdict)
        if isinstance(verdict.get("steps"), list):
            kept["steps"] = [
                {key: step.get(key) for key in STEP_BEFORE_EXPLANATION}
                for step in verdict["steps"]
            ]
        return kept

    def readable(self, question, text, lang):
        answers = self.stored_answer(text)
        if not isinstance(answers, dict):
            return text or ""
        return separator(lang).join(
            f"{name} = {plain_value(typed)}" for name, typed in answers.items()
        )

    def result_fields(self, question, verdict, text, lang, problem=None):
        if problem is None:
            return {}
        public = problem.public_dict(lang)
        answers = self.stored_answer(text)
        return {
            "problem": public,
            "problem_object": problem,
            "answers": answers if isinstance(answers, dict) else {},
            "verdict": dict(verdict),
            "labels": {ask["name"]: ask["label"] for ask in public["ask"]},
            "expected": {a.name: problem.answer_json(a.name) for a in problem.ask},
        }

    def preview(self, question, lines, labels, lang, seed):
        kind, level = question.data["kind"], question.data["level"]
        lines.append(labels["generated"].format(kind=kind, level=level, seed=seed))
        problem = problems.generate(kind, seed, level)
        public = problem.public_dict(lang)
        colon = labels["colon"].rstrip()
        lines += ["", public["prompt"], f"{labels['given']}{colon}"]
        lines += [
            f"  {name} = {_compact(value)}" for name, value in public["given"].items()
        ]
        lines.append(f"{labels['asked']}{colon}")
        lines += [f"  {ask['name']}: {ask['label']}" for ask in public["ask"]]
        answers = problem.to_dict()["answer"]
        return [
            f"  {name} = {_compact(_rounded(value, problem.precision))}"
            for name, value in answers.items()
        ]


def _rounded(value: Any, decimals: int) -> Any:
    """Round every float in a nested answer to the problem's precision."""
    if isinstance(value, list):
        return [_rounded(item, decimals) for item in value]
    if isinstance(value, float):
        return round(value, decimals)
    return value


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)
