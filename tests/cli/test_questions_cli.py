"""`quizsvc questions validate` and `quizsvc questions show`."""

from __future__ import annotations

import re

import pytest
from click.testing import CliRunner

from quizsvc import bank
from quizsvc.cli import main
from quizsvc.commands.questions import render_question

PROBLEM_LINE = re.compile(r"^\S+\.toml:\d+: .+$")


@pytest.fixture(scope="module")
def real_bank():
    return bank.load()


def invoke(*args: str):
    return CliRunner().invoke(main, ["questions", *args])


def test_validate_summarises_the_real_bank(real_bank):
    """Does a valid bank get exit 0 and one line counting lessons, skills, types?"""
    result = invoke("validate")
    assert result.exit_code == 0, result.output
    (line,) = result.output.splitlines()
    counts = real_bank.counts_by_type()
    assert f"{len(real_bank.questions)} questions" in line
    assert "1 lesson, 10 skills" in line
    for kind in bank.QUESTION_TYPES:
        assert f"{kind} {counts[kind]}" in line


def test_validate_accepts_a_lesson_folder(mini_bank):
    """Can an author validate the one lesson they are writing?"""
    root = mini_bank.write()
    result = invoke("validate", str(root / "lesson-99-mini"))
    assert result.exit_code == 0, result.output
    assert "ok: 1 lesson, 1 skill, 1 note, 6 questions" in result.output


def test_validate_lists_each_problem_as_path_line_message(mini_bank):
    """Does a broken bank give exit 1 and only `path:line: message` lines?"""
    broken = mini_bank.questions.replace('kind = "scores"', 'kind = "score"').replace(
        'lesson_note = "mini-note"\nprompt.zh-CN = "算',
        'lesson_note = "mini-nope"\nprompt.zh-CN = "算',
    )
    root = mini_bank.write(questions=broken)
    result = CliRunner().invoke(main, ["questions", "validate", str(root)])
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert len(lines) == 2
    assert all(PROBLEM_LINE.match(line) for line in lines), lines
    assert any("unknown problem kind 'score'" in line for line in lines)
    assert any("unknown note 'mini-nope'" in line for line in lines)
    assert "2 problem(s)" in result.stderr


def test_validate_warns_about_guessable_cues_but_still_passes(mini_bank):
    """Is a guessable cue printed as `path:line: warning: …` with exit code 0?"""
    cued = mini_bank.questions.replace(
        'prompt.en = "The shape is ____."', 'prompt.en = "[Tq, Tk]: the shape is ____."'
    ).replace('text.en = "B"', 'text.en = "B, the long and careful option"')
    root = mini_bank.write(questions=cued)
    result = invoke("validate", str(root))
    assert result.exit_code == 0, result.output
    *warnings, summary = result.output.splitlines()
    assert len(warnings) == 2
    assert all(re.match(r"^\S+\.toml:\d+: warning: .+$", w) for w in warnings)
    assert any("contains its own answer '[Tq, Tk]'" in w for w in warnings)
    assert any("the correct option is the longest in en" in w for w in warnings)
    assert summary.endswith("; 2 warnings")


def test_validate_refuses_a_missing_folder(tmp_path):
    """Is a path that does not exist a usage error (exit 2), not a crash?"""
    result = invoke("validate", str(tmp_path / "nowhere"))
    assert result.exit_code == 2
    assert "does not exist" in result.output
    assert "Traceback" not in result.output


def test_show_prints_the_question_then_its_answer():
    """Does `show` print what the learner sees first and the answer after it?"""
    result = invoke("show", "l16-softmax-axis", "--lang", "en")
    assert result.exit_code == 0, result.output
    before, after = result.output.split("— Answer —")
    assert "Turning the scores S" in before
    assert "  a) Over each column" in before
    assert "✓" not in before and "✓ b)" in after
    why_a_is_wrong = "That compares which query wants a given key most"
    assert why_a_is_wrong not in before and why_a_is_wrong in after
    assert "Lesson note: l16-softmax" in after


def test_show_defaults_to_chinese():
    """Is the learners' language, zh-CN, the default?"""
    result = invoke("show", "l16-scores-shape")
    assert result.exit_code == 0, result.output
    assert "分数矩阵 S = QKᵀ/√d 的形状是 ____" in result.output
    assert "— 答案 —" in result.output and "[Tq, Tk]" in result.output


def test_show_rounds_a_numeric_answer_to_its_tolerance():
    """Is 0.660 shown as 0.660, the precision the prompt asks for?"""
    result = invoke("show", "l16-hand-lesson-output", "--lang", "en")
    assert "  0.660  (tolerance ±0.0015)" in result.output


def test_show_a_generated_question_with_a_seed_is_reproducible():
    """Does a fixed seed show the same fresh numbers twice?"""
    first = invoke("show", "l16-hand-generated-small", "--seed", "11", "--lang", "en")
    second = invoke("show", "l16-hand-generated-small", "--seed", "11", "--lang", "en")
    assert first.exit_code == 0, first.output
    assert first.output == second.output
    before, after = first.output.split("— Answer —")
    assert "seed 11" in before and "Given:" in before
    assert re.search(r"^  O = \[\[", after, re.MULTILINE)


def test_show_an_unknown_id_suggests_close_ones():
    """Does a typo in the id get exit 2 and a suggestion instead of a traceback?"""
    result = invoke("show", "l16-scores-shap")
    assert result.exit_code == 2
    assert "no question with id 'l16-scores-shap'" in result.output
    assert "l16-scores-shape" in result.output


def test_show_on_an_invalid_bank_points_to_validate(mini_bank):
    """Does `show` on a broken bank say how to find the problems?"""
    root = mini_bank.write(
        questions=mini_bank.questions.replace("level = 1", "level = 9")
    )
    result = invoke("show", "mini-choice", "--bank", str(root))
    assert result.exit_code == 1
    assert "questions validate" in result.output


@pytest.mark.parametrize("lang", ["zh-CN", "en"])
def test_every_question_renders_in_both_languages(real_bank, lang):
    """Can every question of the bank be previewed, answer after prompt?"""
    other = "en" if lang == "zh-CN" else "zh-CN"
    heading = "— 答案 —" if lang == "zh-CN" else "— Answer —"
    for question in real_bank.questions.values():
        text = render_question(question, real_bank, lang, seed=3)
        before, after = text.split(heading)
        assert question.prompt[lang] in before
        assert question.explanation[lang] in after
        assert question.explanation[lang] not in before
        assert question.prompt[other] not in text
        if question.type == "recall":
            assert question.data["model_answer"][lang] in after
            assert "Again / Hard / Good / Easy" in after


@pytest.mark.parametrize("lang", ["zh-CN", "en"])
def test_show_says_select_all_once(real_bank, lang):
    """Is "select all that apply" said once when the prompt already says it?"""
    text = render_question(
        real_bank.questions["l16-impl-flash-replaces"], real_bank, lang, seed=0
    )
    prompt = text.splitlines()[2].casefold()
    assert prompt.count("select all that apply") + prompt.count("多选") == 1
