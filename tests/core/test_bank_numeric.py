"""Numeric items: the key sits near the exact value, and no classic mistake is accepted.

Each numeric item declares its exact value (from the engine, or as an
expression in `exact`) and the values of its classic wrong answers in
`near_misses`; `quizsvc questions validate` refuses an item whose key is not
within tolerance/2 of the exact value or whose tolerance admits a near miss,
at the file and line to fix.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from quizsvc import bank
from quizsvc.bank import check_answer
from quizsvc.cli import main

LESSON = "lesson-16-attention"


@pytest.fixture(scope="module")
def real_bank() -> bank.Bank:
    return bank.load()


@pytest.fixture
def bank_copy(tmp_path) -> Path:
    """A copy of the real bank that a test may break."""
    root = tmp_path / "questions"
    shutil.copytree(bank.DEFAULT_PATH, root)
    return root


def _edit(root: Path, name: str, old: str, new: str) -> tuple[Path, int]:
    """Replace `old` once in a bank file; return the file and the edited line."""
    path = root / LESSON / name
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    path.write_text(text.replace(old, new), encoding="utf-8")
    return path, text[: text.index(old)].count("\n") + 1


def _numeric(real_bank: bank.Bank) -> list[bank.Question]:
    return [
        q
        for q in real_bank.questions.values()
        if q.type == "numeric" and q.lesson_id == LESSON
    ]


def test_every_numeric_item_of_lesson_16_declares_its_near_misses(real_bank):
    """Does every numeric item know its exact value and its classic wrong answers?"""
    for question in _numeric(real_bank):
        data = question.data
        assert data["exact"] is not None, question.id
        assert len(data["near_misses"]) >= 3, question.id


def test_no_declared_near_miss_is_accepted_and_the_exact_value_is(real_bank):
    """Is every near miss graded wrong, and the exact value right, by the checker?"""
    for question in _numeric(real_bank):
        assert check_answer(question, repr(question.data["exact"])).correct
        for value in question.data["near_misses"]:
            result = check_answer(question, repr(value))
            assert not result.correct, (question.id, value)


def test_validate_refuses_a_tolerance_that_admits_a_near_miss(bank_copy):
    """Is the old ±0.0001 on 0.0884 refused, since it accepts the truncation 0.0883?"""
    path, _ = _edit(
        bank_copy,
        "scaling.toml",
        "answer = 0.08839\ntolerance = 0.00006\n",
        "answer = 0.0884\ntolerance = 0.0001\n",
    )
    line = (
        path.read_text(encoding="utf-8")
        .splitlines()
        .index('near_misses = [0.0883, 0.0885, "1/128", "sqrt(128)", "1/sqrt(64)"]')
    )
    problems = bank.validate(bank_copy)
    assert [p.line for p in problems] == [line + 1, line + 1]
    assert all(p.path.endswith("scaling.toml") for p in problems)
    assert (
        "the near miss 0.0883 lies within the tolerance 0.0001" in problems[0].message
    )
    assert "0.0885" in problems[1].message


def test_validate_refuses_a_key_far_from_the_exact_value(bank_copy):
    """Is a key more than tolerance/2 from `exact` refused at its line?"""
    path, line = _edit(
        bank_copy, "scaling.toml", "answer = 0.08839\n", "answer = 0.08842\n"
    )
    (problem,) = bank.validate(bank_copy)
    assert (problem.path, problem.line) == (str(path), line)
    assert "disagrees with the exact value: = 0.0883883" in problem.message


def test_the_cli_names_the_file_and_line_of_a_near_miss(bank_copy):
    """Does `quizsvc questions validate` print path:line and exit 1?"""
    _edit(
        bank_copy,
        "masking.toml",
        "answer = 2.340\ntolerance = 0.0015\n",
        "answer = 2.340\ntolerance = 0.2\n",
    )
    result = CliRunner().invoke(main, ["questions", "validate", str(bank_copy)])
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert lines and all(re.match(r"^\S+masking\.toml:\d+: ", line) for line in lines)
    assert any("the near miss 2.2449 lies within the tolerance 0.2" in x for x in lines)


@pytest.mark.parametrize(
    ("old", "new", "fragment"),
    [
        ('exact = "64"', 'exact = "sixty-four"', "exact: 'sixty-four' is not a number"),
        ('exact = "64"', "exact = true", "exact: True is not a number"),
        ("near_misses = [8, 1, 4096]", 'near_misses = "8"', "must be a list"),
        ("near_misses = [8, 1, 4096]", 'near_misses = [8, "1/0"]', "'1/0'"),
        ("near_misses = [8, 1, 4096]", "near_misses = [8, 64]", "near miss 64 lies"),
        ('exact = "64"', 'exact = "82"', "disagrees with the exact value: = 82"),
    ],
)
def test_malformed_exact_values_and_near_misses_are_problems(
    bank_copy, old, new, fragment
):
    _edit(bank_copy, "scaling.toml", old, new)
    problems = bank.validate(bank_copy)
    assert any(fragment in p.message for p in problems), [str(p) for p in problems]


def test_an_exact_value_must_agree_with_the_engine(bank_copy):
    """Is an `exact` that contradicts [questions.attention] refused?"""
    _edit(
        bank_copy,
        "softmax.toml",
        "answer = 0.665\ntolerance = 0.0015\n",
        'answer = 0.665\ntolerance = 0.0015\nexact = "1/(1 + e^-1 + e^-2)"\n',
    )
    assert bank.validate(bank_copy) == []
    _edit(bank_copy, "softmax.toml", 'exact = "1/(1 + e^-1 + e^-2)"', 'exact = "0.6"')
    (problem,) = bank.validate(bank_copy)
    assert "disagrees with the engine's weights[0, 0] = 0.665241" in problem.message


def test_an_exact_value_is_read_by_the_shared_parser(bank_copy):
    """Is `exact = "8²"` 64, as a learner's 8² is?"""
    _edit(bank_copy, "scaling.toml", 'exact = "64"', 'exact = "8²"')
    assert bank.validate(bank_copy) == []
