"""What spans a lesson: its ideas' coverage, and the cues a test-wise learner uses.

The real bank maps each of lesson 16's 18 ideas to the questions that
exercise it (lesson.toml, [[ideas]]); `lint` warns about a thin idea, an
unmapped question, absolute words that mark the wrong options, and option
ids out of order. The content fixes of the review of 2026-12-02 are pinned
where a rule can hold them.
"""

from __future__ import annotations

import importlib
import re
import shutil
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from quizsvc import bank
from quizsvc.bank import LANGUAGES, check_answer
from quizsvc.bank.lint import (
    ABSOLUTE_WORDS,
    absolute_word_cue,
    option_ids_out_of_order,
)
from quizsvc.cli import main
from quizsvc.engine import attention

LESSON = "lesson-16-attention"


@pytest.fixture(scope="module")
def real_bank() -> bank.Bank:
    return bank.load()


@pytest.fixture
def bank_copy(tmp_path) -> Path:
    root = tmp_path / "questions"
    shutil.copytree(bank.DEFAULT_PATH, root)
    return root


def _edit(root: Path, name: str, old: str, new: str) -> int:
    """Replace `old` once in a bank file; return the line where it stood."""
    path = root / LESSON / name
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    path.write_text(text.replace(old, new), encoding="utf-8")
    return text[: text.index(old)].count("\n") + 1


# --------------------------------------------------------------------------
# Coverage by idea


def test_each_of_the_18_ideas_has_four_questions_of_two_types(real_bank):
    """Is every idea of the seed lesson exercised by ≥ 4 questions of ≥ 2 types?"""
    ideas = real_bank.lessons[LESSON].ideas
    assert [idea.id for idea in ideas] == [f"i{n}" for n in range(1, 19)]
    for idea in ideas:
        found = [real_bank.questions[q] for q in idea.question_ids]
        assert len(found) >= 4, idea.id
        assert len({q.type for q in found}) >= 2, idea.id
        assert all(idea.text[lang] for lang in LANGUAGES)


@pytest.mark.parametrize(("idea_id", "added"), [("i3", 2), ("i7", 2), ("i11", 2)])
def test_the_three_thin_ideas_gained_questions(real_bank, idea_id, added):
    """Do analogy limits, fully masked rows and RMSNorm + scale have new items?"""
    (idea,) = [i for i in real_bank.lessons[LESSON].ideas if i.id == idea_id]
    assert len(idea.question_ids) >= 3 + added


def test_every_question_of_the_lesson_exercises_an_idea(real_bank):
    mapped = {q for idea in real_bank.lessons[LESSON].ideas for q in idea.question_ids}
    assert {q.id for q in real_bank.questions.values()} <= mapped


def test_an_idea_naming_an_unknown_question_is_a_problem(bank_copy):
    line = _edit(
        bank_copy,
        "lesson.toml",
        '["l16-impl-where-scale-lives", "l16-impl-trace", "l16-scaling-head',
        '["l16-impl-where-scale-lives", "l16-impl-tarce", "l16-scaling-head',
    )
    (problem,) = bank.validate(bank_copy)
    assert problem.line == line
    assert "idea 'i16': unknown question 'l16-impl-tarce'" in problem.message


def test_a_thin_idea_and_an_unmapped_question_are_warnings(bank_copy):
    """Does dropping questions from an idea warn at that idea's line?"""
    line = _edit(
        bank_copy,
        "lesson.toml",
        'questions = ["l16-impl-where-scale-lives", "l16-impl-trace", '
        '"l16-scaling-head-dim-128", "l16-scaling-exponent"]',
        'questions = ["l16-impl-where-scale-lives", "l16-impl-trace"]',
    )
    assert bank.validate(bank_copy) == []
    warnings = [str(w) for w in bank.lint(bank_copy)]
    assert any(
        f"lesson.toml:{line}: idea 'i16' has 2 question(s) of 2 type(s)" in w
        for w in warnings
    ), warnings
    assert any("'l16-scaling-exponent' exercises none of the lesson's ideas" in w
               for w in warnings)  # fmt: skip


def test_the_coverage_command_prints_every_idea_and_skill(real_bank):
    result = CliRunner().invoke(main, ["questions", "coverage", "--lang", "en"])
    assert result.exit_code == 0, result.output
    rows = [line.split() for line in result.output.splitlines()[1:]]
    ideas = [row for row in rows if row[0].startswith("i")]
    assert len(ideas) == 18 and all("ok" in row for row in ideas)
    skills = [row for row in rows if row[0] == "skill"]
    assert [row[1] for row in skills] == list(real_bank.lessons[LESSON].skill_ids)
    assert all(int(row[2]) >= 6 for row in skills)


# --------------------------------------------------------------------------
# Cues


def _options(right: list[str], wrong: list[str]) -> list[dict]:
    def option(text: str, correct: bool) -> dict:
        return {"text": {"zh-CN": text, "en": text}, "correct": correct}

    return [option(t, True) for t in right] + [option(t, False) for t in wrong]


def test_absolute_words_on_wrong_options_only_are_a_cue():
    """Is "always" on 3 of 10 wrong options and no right one a warning?"""
    right = [f"right {n}" for n in range(10)]
    wrong = ["it always holds"] * 3 + [f"wrong {n}" for n in range(7)]
    (en,) = [m for m in absolute_word_cue(_options(right, wrong)) if "in en" in m]
    assert "3/10 wrong options (30%) against 0/10 right ones (0%)" in en


def test_absolute_words_spread_evenly_are_no_cue():
    right = ["it must be so"] + [f"right {n}" for n in range(9)]
    wrong = ["it must be so"] * 2 + [f"wrong {n}" for n in range(8)]
    assert absolute_word_cue(_options(right, wrong)) == []


@pytest.mark.parametrize(
    ("text", "absolute"),
    [
        ("最大的权重一定变成 1", True),
        ("每个注意力头都会学成规则", True),
        ("The largest weight always becomes 1", True),
        ("Every layer has one", True),
        ("最大的权重变成 1", False),
        ("each query's row sums to 1", False),
    ],
)
def test_the_absolute_words_counted(text, absolute):
    language = "en" if text.isascii() else "zh-CN"
    assert bool(ABSOLUTE_WORDS[language].search(text)) is absolute


def test_the_real_bank_keeps_absolutes_balanced_in_both_languages(real_bank):
    """Do right and wrong options carry absolutes at rates ≤ 10 points apart?"""
    options = [
        option
        for question in real_bank.questions.values()
        if question.type == "choice"
        for option in question.data["options"]
    ]
    for language, pattern in ABSOLUTE_WORDS.items():
        shares = []
        for correct in (True, False):
            group = [o for o in options if o["correct"] is correct]
            marked = sum(bool(pattern.search(o["text"][language])) for o in group)
            shares.append(100 * marked / len(group))
        assert abs(shares[0] - shares[1]) <= 10, (language, shares)


def test_putting_absolutes_back_on_distractors_is_a_cue(real_bank):
    """Would 一定/always on 20 distractors of today's bank be refused again?"""
    options = [
        dict(option)
        for question in real_bank.questions.values()
        if question.type == "choice"
        for option in question.data["options"]
    ]
    wrong = [option for option in options if not option["correct"]]
    for option in wrong[:20]:
        option["text"] = {
            "zh-CN": option["text"]["zh-CN"] + "，一定如此",
            "en": option["text"]["en"] + ", always",
        }
    messages = absolute_word_cue(options)
    assert [m.split(": ")[0].rsplit(" ", 1)[1] for m in messages] == ["zh-CN", "en"]


def test_the_cue_is_reported_at_the_lessons_id_line(monkeypatch):
    """Is the lesson-wide cue a warning at lesson.toml's id line?"""
    lint_module = importlib.import_module("quizsvc.bank.lint")
    monkeypatch.setattr(lint_module, "ABSOLUTE_GAP", 0)
    cues = [w for w in bank.lint() if "absolute words" in w.message]
    assert cues and {(w.path.rsplit("/", 1)[-1], w.line) for w in cues} == {
        ("lesson.toml", 5)
    }


def test_option_ids_out_of_order_are_a_warning():
    options = [{"id": i} for i in "abcfde"]
    assert "a, b, c, f, d, e" in option_ids_out_of_order(options)[0]
    assert option_ids_out_of_order([{"id": i} for i in "abcdef"]) == []


def test_every_choice_item_lists_its_ids_in_order(real_bank):
    """Does l16-impl-flash-replaces (once a, b, c, f, d, e) run a to f?"""
    for question in real_bank.questions.values():
        if question.type == "choice":
            ids = [o["id"] for o in question.data["options"]]
            assert ids == sorted(ids), question.id


# --------------------------------------------------------------------------
# Content the review of 2026-12-02 corrected


def test_no_text_says_the_output_equals_a_v_only_for_a_weight_of_one(real_bank):
    """Is the false "only when one weight is exactly 1" gone everywhere?"""
    false = re.compile(
        r"只有[^。；]*权重[^。；]*为 1|only (when|a) [^.;]*weight[^.;]*1"
    )
    texts = [n.body[lang] for n in real_bank.notes.values() for lang in LANGUAGES]
    for question in real_bank.questions.values():
        texts += [question.explanation[lang] for lang in LANGUAGES]
        data = question.data
        for option in data.get("options", []):
            texts += [option["text"][lang] for lang in LANGUAGES]
            texts += [option["why"][lang] for lang in LANGUAGES if option["why"]]
        if question.type == "recall":
            texts += [data["model_answer"][lang] for lang in LANGUAGES]
            texts += [point[lang] for point in data["key_points"] for lang in LANGUAGES]
    assert not [t for t in texts if false.search(t)]


def test_the_notes_counterexample_is_what_the_engine_computes(real_bank):
    """Do equal weights over V = [[0,0],[2,2],[1,1]] give v₂, as the note says?"""
    trace = attention([[0, 0]], [[1, 0], [0, 1], [1, 1]], [[0, 0], [2, 2], [1, 1]])
    np.testing.assert_allclose(trace.weights, [[1 / 3] * 3])
    np.testing.assert_allclose(trace.output, [[1, 1]])
    body = real_bank.notes["l16-weighted-sum"].body
    assert "[1, 1] = v₂" in body["zh-CN"] and "[1, 1] = v₂" in body["en"]


def test_no_output_item_can_be_answered_with_a_weight(real_bank):
    """Is the weight at an output item's index graded wrong (V rows not one-hot)?"""
    for question in real_bank.questions.values():
        spec = question.type == "numeric" and question.data["attention"]
        if not spec or spec["quantity"] != "output":
            continue
        trace = attention(spec["q"], spec["k"], spec["v"], mask=spec["mask"],
                          causal=spec["causal"], scale=spec["scale"],
                          temperature=spec["temperature"])  # fmt: skip
        row, col = spec["index"]
        for weight in trace.weights[row]:
            assert not check_answer(question, repr(float(weight))).correct, question.id


def test_the_flat_temperature_item_stands_on_its_own(real_bank):
    """Does l16-temp-numeric-flat give its scores instead of "the same row"?"""
    prompt = real_bank.questions["l16-temp-numeric-flat"].prompt
    assert "[1, 0]" in prompt["zh-CN"] and "同一行" not in prompt["zh-CN"]
    assert "The same row" not in prompt["en"]


def test_an_idea_with_enough_questions_of_one_type_is_still_thin(real_bank):
    """Do four choice questions leave an idea thin (one type), and a fifth type not?"""
    from quizsvc.bank import Idea
    from quizsvc.bank.ideas import coverage_of

    choices = [q.id for q in real_bank.questions.values() if q.type == "choice"]
    one_type = Idea("x", {"zh-CN": "想法", "en": "idea"}, tuple(choices[:4]))
    assert coverage_of(one_type, real_bank.questions).thin
    two_types = Idea("y", one_type.text, (*choices[:3], "l16-scores-shape"))
    found = coverage_of(two_types, real_bank.questions)
    assert not found.thin and found.types == {"choice": 3, "cloze": 1}
