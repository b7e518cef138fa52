"""`quizsvc problem` prints a generated problem; `quizsvc check` grades answers.

Both are thin: they parse options, call quizsvc.problems / quizsvc.grading and
format the result. Neither needs the app or the database.
"""

from __future__ import annotations

import json
from typing import Any

import click
import numpy as np

from quizsvc.commands.options import lang_option
from quizsvc.formatting import format_matrix, format_number
from quizsvc.grading import grade
from quizsvc.problems import KINDS, LEVELS, Problem, ProblemError, generate

_HEADINGS = {
    "zh-CN": {
        "given": "已知",
        "ask": "要求（按步骤顺序）",
        "answer": "答案",
        "level": "难度",
        "seed": "种子",
        "precision": "保留 {} 位小数",
        "correct": "结果",
        "yes": "正确",
        "no": "不正确",
        "score": "得分",
        "misconception": "常见错误",
        "step": "步骤",
        "answered": "未作答",
        "consistent": "（与你之前的步骤一致）",
        "not_attempt": "格式有误，不计入作答",
        "kinds": "题型",
        "colon": "：",
    },
    "en": {
        "given": "Given",
        "ask": "Asked (in step order)",
        "answer": "Answers",
        "level": "level",
        "seed": "seed",
        "precision": "{} decimals",
        "correct": "Result",
        "yes": "correct",
        "no": "not correct",
        "score": "score",
        "misconception": "Misconception",
        "step": "step",
        "answered": "not answered",
        "consistent": "(follows from your earlier steps)",
        "not_attempt": "format errors: not counted as an attempt",
        "kinds": "Kinds",
        "colon": ": ",
    },
}


def _decimals_for(array: np.ndarray, precision: int) -> int:
    """Show givens as typed: integers bare, one-decimal entries with one decimal."""
    finite = array[np.isfinite(array)]
    if finite.size == 0 or np.all(finite == np.round(finite)):
        return 0
    if np.all(np.abs(finite * 10 - np.round(finite * 10)) < 1e-9):
        return 1
    return max(precision, 2)


def _show_value(value: Any, precision: int, indent: str = "    ") -> str:
    if isinstance(value, np.ndarray) and value.ndim == 2:
        array = value.astype(np.float64)
        return "\n" + format_matrix(array, _decimals_for(array, precision), indent)
    if isinstance(value, (bool, np.bool_)):
        return " " + str(bool(value)).lower()
    if isinstance(value, float) and not value.is_integer():
        return " " + format_number(value, max(precision, 2)).rstrip("0")
    return f" {value}"


def _describe_ask(ask, lang: str) -> str:
    shape = "×".join(str(n) for n in ask.shape)
    kinds = {
        "matrix": {"zh-CN": f"{shape} 矩阵", "en": f"{shape} matrix"},
        "boolean_matrix": {"zh-CN": f"{shape}，填 1 或 0", "en": f"{shape} of 1/0"},
        "number": {"zh-CN": "一个数", "en": "a number"},
        "shape": {"zh-CN": f"{shape} 个整数", "en": f"{shape} whole numbers"},
        "choice": {"zh-CN": "选一个：", "en": "one of: "},
    }[ask.format][lang]
    if ask.format == "choice":
        kinds += ", ".join(c.value for c in ask.choices)
    return f"  {ask.name:<13} {ask.label[lang]}  [{kinds}]"


def _show_answer(problem: Problem, ask) -> str:
    value = problem.answer[ask.name]
    if ask.format == "matrix":
        return "\n" + format_matrix(value, problem.precision, "    ")
    if ask.format == "boolean_matrix":
        return "\n" + format_matrix(value, 0, "    ")
    if ask.format == "number":
        return " " + format_number(float(value), problem.precision)
    return " " + json.dumps(problem.answer_json(ask.name), ensure_ascii=False)


def render_problem(problem: Problem, lang: str, with_answer: bool) -> str:
    """Plain-text rendering of a problem for the terminal."""
    words = _HEADINGS[lang]
    lines = [
        f"{problem.kind} · {words['level']} {problem.level} · {words['seed']} "
        f"{problem.seed} · {words['precision'].format(problem.precision)}",
        "",
        problem.prompt[lang],
        "",
        f"{words['given']}{words['colon'].rstrip()}",
    ]
    for name, value in problem.given.items():
        lines.append(f"  {name} ={_show_value(value, problem.precision)}")
    lines += ["", f"{words['ask']}{words['colon'].rstrip()}"]
    lines += [_describe_ask(ask, lang) for ask in problem.ask]
    if with_answer:
        lines += ["", f"{words['answer']}{words['colon'].rstrip()}"]
        for ask in problem.ask:
            lines.append(f"  {ask.name} ={_show_answer(problem, ask)}")
    return "\n".join(lines)


def _kind_list() -> str:
    width = max(len(k) for k in KINDS)
    return "\n".join(f"{kind:<{width}}  {text}" for kind, text in KINDS.items())


@click.command("problem")
@click.argument("kind", required=False, type=click.Choice(list(KINDS)), metavar="KIND")
@click.option(
    "--seed",
    type=click.IntRange(min=0),
    default=0,
    show_default=True,
    help="Which problem of this kind (the same seed gives the same problem).",
)
@click.option(
    "--level",
    type=click.IntRange(min(LEVELS), max(LEVELS)),
    default=1,
    show_default=True,
    help="1 = by hand, 2 = masks, 3 = bigger, decimals.",
)
@click.option("--json", "as_json", is_flag=True, help="Print machine-readable JSON.")
@click.option("--with-answer", is_flag=True, help="Include the exact answers.")
@lang_option("Language of the text output.")
@click.option(
    "--list",
    "list_kinds",
    is_flag=True,
    help="List the problem kinds with one-line descriptions.",
)
def problem_command(kind, seed, level, as_json, with_answer, lang, list_kinds) -> None:
    """Print a generated attention problem.

    Examples:

        quizsvc problem attention --seed 7 --level 2

        quizsvc problem lesson_example --with-answer --lang en

        quizsvc problem --list
    """
    if list_kinds:
        click.echo(_kind_list())
        return
    if kind is None:
        raise click.UsageError("give a problem KIND (see `quizsvc problem --list`)")
    try:
        problem = generate(kind, seed, level)
    except ProblemError as exc:
        raise click.UsageError(str(exc)) from None
    if as_json:
        data = problem.to_dict() if with_answer else problem.public_dict()
        click.echo(json.dumps(data, ensure_ascii=False))
        return
    click.echo(render_problem(problem, lang, with_answer))


def _read_submission(source) -> dict:
    text = source.read()
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise click.UsageError(f"the input is not JSON: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("problem"), dict):
        raise click.UsageError(
            'expected {"problem": {"kind": ..., "seed": ..., "level": ...}, '
            '"answers": {...}}'
        )
    answers = data.get("answers", {})
    if not isinstance(answers, dict):
        raise click.UsageError('"answers" must be an object mapping names to values')
    return data


def _problem_from(spec: dict) -> Problem:
    """Regenerate the problem from kind, seed and level; never trust given answers."""
    kind, seed, level = spec.get("kind"), spec.get("seed", 0), spec.get("level", 1)
    if kind not in KINDS:
        raise click.UsageError(
            f"problem.kind must be one of: {', '.join(KINDS)}; got {kind!r}"
        )
    for name, value in (("seed", seed), ("level", level)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise click.UsageError(
                f"problem.{name} must be a whole number; got {value!r}"
            )
    try:
        return generate(kind, seed, level)
    except ProblemError as exc:
        raise click.UsageError(str(exc)) from None


def render_verdict(verdict, lang: str) -> str:
    """Plain-text rendering of a verdict for the terminal."""
    words = _HEADINGS[lang]
    lines = [
        f"{words['correct']}{words['colon']}"
        f"{words['yes'] if verdict.correct else words['no']}"
        f" · {words['score']} {verdict.score:.2f}",
    ]
    if not verdict.attempt:
        lines.append(words["not_attempt"])
    if verdict.misconception:
        lines.append(f"{words['misconception']}{words['colon']}{verdict.misconception}")
    lines.append(verdict.feedback[lang])
    for step in verdict.steps:
        if not step.answered:
            mark = words["answered"]
        else:
            mark = "✓" if step.correct else "✗"
            if step.consistent_with_previous and not step.correct:
                mark += f" {words['consistent']}"
        lines.append(f"  {step.name:<13} {mark}  {step.score:.2f}")
    for error in verdict.format_errors:
        lines.append(f"  ! {error.message[lang]}")
    return "\n".join(lines)


@click.command("check")
@click.argument(
    "source", type=click.File("r", encoding="utf-8"), default="-", metavar="[FILE|-]"
)
@click.option("--json", "as_json", is_flag=True, help="Print the verdict as JSON.")
@lang_option("Language of the text output.")
def check_command(source, as_json, lang) -> None:
    """Grade answers to a generated problem, read as JSON from FILE or stdin.

    The input is {"problem": {"kind": ..., "seed": ..., "level": ...},
    "answers": {"S": "[[0.7071, 0]]", ...}}; the problem may also be a full
    `quizsvc problem --json` dump. It is regenerated from kind, seed and level,
    so answers sent along with it are ignored. Example:

        quizsvc problem lesson_example --json | jq '{problem: ., answers:
        {S: "0.7071 0", A: "0.6698 0.3302", O: "0.6698 0.6605"}}' | quizsvc check
    """
    data = _read_submission(source)
    problem = _problem_from(data["problem"])
    verdict = grade(problem, data.get("answers", {}))
    if as_json:
        click.echo(json.dumps(verdict.to_dict(), ensure_ascii=False))
        return
    click.echo(render_verdict(verdict, lang))
