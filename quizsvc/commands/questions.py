"""`quizsvc questions …`: check the question bank and preview its questions."""

from __future__ import annotations

import random
from pathlib import Path

import click

from quizsvc import bank as question_bank
from quizsvc import item_types
from quizsvc.bank import Bank, BankError, Question
from quizsvc.bank.ideas import coverage
from quizsvc.commands.options import lang_option

# Headings of `questions show`, in the learner's language.
LABELS = {
    "zh-CN": {
        "colon": "：",
        # Full-width parentheses carry their own spacing.
        "gap": "",
        "answer": "答案",
        "explanation": "解析",
        "note": "课程笔记",
        "skills": "技能",
        "difficulty": "难度",
        "multiple": "（多选）",
        "single": "（单选）",
        "correct": "正确",
        "wrong": "错误",
        "tolerance": "允许误差",
        "accepted": "可接受的写法",
        "order": "正确顺序",
        "model": "参考答案",
        "points": "要点",
        "rate": "对照参考答案，给自己评分：Again / Hard / Good / Easy",
        "fill": "（填空）",
        "steps": "把下列步骤排成正确的顺序：",
        "generated": "（由生成器出题：{kind}，第 {level} 级，种子 {seed}）",
        "given": "已知",
        "asked": "要求",
        "no_generator": "生成器暂不可用",
    },
    "en": {
        "colon": ": ",
        "gap": " ",
        "answer": "Answer",
        "explanation": "Explanation",
        "note": "Lesson note",
        "skills": "skills",
        "difficulty": "difficulty",
        "multiple": "(select all that apply)",
        "single": "(select one)",
        "correct": "correct",
        "wrong": "wrong",
        "tolerance": "tolerance",
        "accepted": "accepted answers",
        "order": "correct order",
        "model": "Model answer",
        "points": "Key points",
        "rate": "Compare with the model answer and rate yourself: Again / Hard / Good "
        "/ Easy",
        "fill": "(fill in the blank)",
        "steps": "Put these steps in the right order:",
        "generated": "(from the problem generator: {kind}, level {level}, seed {seed})",
        "given": "Given",
        "asked": "Asked",
        "no_generator": "the problem generator is not available",
    },
}


@click.group("questions")
def questions() -> None:
    """Check the question bank (questions/) and preview its questions."""


@questions.command("validate")
@click.argument(
    "path",
    required=False,
    type=click.Path(exists=True, file_okay=False, path_type=Path),
)
def validate_command(path: Path | None) -> None:
    """Check every lesson, skill, note and question of the bank at PATH.

    PATH is the questions/ folder (the default) or one lesson folder in it.
    Prints one `path:line: warning: message` line per cue that lets a learner
    guess (a correct option that is the longest, a cloze prompt holding its
    own answer, a classic mistake landing within a numeric item's tolerance),
    then a one-line summary, and exits 0 when the bank is valid, warnings or
    not; otherwise prints one `path:line: message` line per problem (a numeric
    key further than tolerance/2 from its exact value, or a tolerance that
    accepts a declared near miss, among them) and exits 1.
    """
    root = path if path is not None else question_bank.DEFAULT_PATH
    problems = question_bank.validate(root)
    if problems:
        for problem in problems:
            click.echo(str(problem))
        click.echo(
            f"{len(problems)} problem(s) in {question_bank.display_path(root)}",
            err=True,
        )
        raise SystemExit(1)
    warnings = question_bank.lint(root)
    for warning in warnings:
        click.echo(f"{warning.path}:{warning.line}: warning: {warning.message}")
    line = summary_line(question_bank.load(root), root)
    if warnings:
        line += f"; {_plural(len(warnings), 'warning')}"
    click.echo(line)


@questions.command("coverage")
@click.argument(
    "path",
    required=False,
    type=click.Path(exists=True, file_okay=False, path_type=Path),
)
@lang_option("Language of the ideas' text.")
def coverage_command(path: Path | None, lang: str) -> None:
    """Print how many questions of which types exercise each lesson idea and skill.

    One table per lesson with [[ideas]] in lesson.toml: each idea's id, its
    question count, its question types and "thin" where it has fewer than 4
    questions or 2 types; then each skill of the lesson likewise.
    """
    root = path if path is not None else question_bank.DEFAULT_PATH
    try:
        bank = question_bank.load(root)
    except BankError as exc:
        raise click.ClickException(
            f"the bank is invalid ({len(exc.problems)} problem(s)); run "
            "`quizsvc questions validate` to list them"
        ) from None
    for lesson in bank.lessons.values():
        click.echo(f"{lesson.id}: {len(lesson.ideas)} ideas")
        for found in coverage(lesson.ideas, bank.questions):
            flag = "thin" if found.thin else "ok"
            click.echo(
                f"  {found.idea.id:<5} {len(found.questions):>3}  {_types(found.types)}"
                f"  {flag}  {found.idea.text[lang]}"
            )
        for skill_id in lesson.skill_ids:
            items = bank.questions_for_skill(skill_id)
            counts: dict[str, int] = {}
            for question in sorted(items, key=lambda q: q.type):
                counts[question.type] = counts.get(question.type, 0) + 1
            click.echo(f"  skill {skill_id:<14} {len(items):>3}  {_types(counts)}")


def _types(counts: dict[str, int]) -> str:
    return ", ".join(f"{kind} {count}" for kind, count in counts.items())


def summary_line(bank: Bank, root: Path) -> str:
    """Return the one-line summary of a valid bank."""
    counts = ", ".join(
        f"{kind} {count}" for kind, count in bank.counts_by_type().items() if count
    )
    where = question_bank.display_path(root)
    return (
        f"{where}: ok: {_plural(len(bank.lessons), 'lesson')}, "
        f"{_plural(len(bank.skills), 'skill')}, {_plural(len(bank.notes), 'note')}, "
        f"{_plural(len(bank.questions), 'question')} ({counts})"
    )


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


@questions.command("show")
@click.argument("question_id", metavar="ID")
@lang_option("Language to show the question in.")
@click.option(
    "--bank",
    "bank_path",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="Bank folder (default: the questions/ folder of this checkout).",
)
@click.option(
    "--seed",
    type=click.IntRange(0),
    default=None,
    help="Seed for a generated question (default: a random one).",
)
def show_command(
    question_id: str, lang: str, bank_path: Path | None, seed: int | None
) -> None:
    """Print question ID as a learner sees it, then its answer.

    Example: quizsvc questions show l16-scores-shape --lang en
    """
    try:
        bank = question_bank.load(bank_path or question_bank.DEFAULT_PATH)
    except BankError as exc:
        raise click.ClickException(
            f"the bank is invalid ({len(exc.problems)} problem(s)); run "
            "`quizsvc questions validate` to list them"
        ) from None
    question = bank.questions.get(question_id)
    if question is None:
        raise click.BadParameter(
            _unknown_id_message(question_id, bank), param_hint="ID"
        )
    if seed is None:
        seed = random.SystemRandom().randrange(2**31)
    click.echo(render_question(question, bank, lang, seed))


def _unknown_id_message(question_id: str, bank: Bank) -> str:
    import difflib

    close = difflib.get_close_matches(question_id, list(bank.questions), n=3)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    return f"no question with id {question_id!r}{hint}"


def render_question(question: Question, bank: Bank, lang: str, seed: int) -> str:
    """Render a question as the learner sees it, then its answer, as text."""
    labels = LABELS[lang]
    public = item_types.public_dict(question, lang)
    skills = ", ".join(question.skills)
    colon = labels["colon"]
    header = f"{question.id} · {question.type} · {labels['skills']}{colon}{skills}"
    if question.difficulty is not None:
        header += f" · {labels['difficulty']} {question.difficulty}"
    lines = [header, "", public["prompt"]]
    answer = item_types.of(question).preview(question, lines, labels, lang, seed)

    note = bank.notes[question.lesson_note]
    lines += [
        "",
        f"— {labels['answer']} —",
        *answer,
        "",
        f"{labels['explanation']}{colon}{question.explanation[lang]}",
        f"{labels['note']}{colon}{note.id} · {note.title[lang]}",
    ]
    return "\n".join(line.rstrip() for line in lines)
