"""The question bank: the real content, the loader's checks, and answer checking."""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from quizsvc import bank, item_types
from quizsvc.bank import (
    LANGUAGES,
    SELF_ASSESSMENT_SCALE,
    BankError,
    Problem,
    canonical_answer,
    check_answer,
    presented_steps,
)
from quizsvc.engine import attention, causal_mask

REQUIRED_SKILLS = [
    "qkv-roles",
    "scores",
    "scaling",
    "softmax",
    "masking",
    "weighted-sum",
    "shapes",
    "temperature",
    "implementation",
    "by-hand",
]
# Skills about ideas rather than numbers need no generated question.
SKILLS_WITHOUT_NUMBERS = {"qkv-roles"}


@pytest.fixture(scope="module")
def real_bank():
    return bank.load()


# --------------------------------------------------------------------------
# The real bank


def test_the_real_bank_is_valid():
    """Does `validate` find nothing wrong with questions/?"""
    assert [str(p) for p in bank.validate()] == []


def test_every_required_skill_is_defined_in_lesson_16(real_bank):
    """Does lesson 16 define exactly the required skills, in teaching order?"""
    lesson = real_bank.lessons["lesson-16-attention"]
    assert lesson.number == 16
    assert list(lesson.skill_ids) == REQUIRED_SKILLS
    assert [real_bank.skills[s].order for s in REQUIRED_SKILLS] == list(range(1, 11))


def test_lesson_16_names_lesson_15_as_prerequisite(real_bank):
    """Can a learner see that lesson 15 (shapes and projections) comes first?"""
    lesson = real_bank.lessons["lesson-16-attention"]
    assert lesson.prerequisites == ("lesson-15-shapes",)
    assert lesson.prerequisite_titles["lesson-15-shapes"] == {
        "zh-CN": "形状与投影",
        "en": "Shapes and projections",
    }


def test_the_bank_has_at_least_50_questions(real_bank):
    """Is the bank big enough for daily drills?"""
    assert len(real_bank.questions) >= 50


@pytest.mark.parametrize("skill_id", REQUIRED_SKILLS)
def test_each_skill_has_six_questions_of_three_types(real_bank, skill_id):
    """Has every skill ≥ 6 questions of ≥ 3 types, generated where numbers apply?"""
    questions = real_bank.questions_for_skill(skill_id)
    types = {q.type for q in questions}
    assert len(questions) >= 6
    assert len(types) >= 3
    if skill_id not in SKILLS_WITHOUT_NUMBERS:
        assert "generated" in types


def test_every_question_type_is_used(real_bank):
    """Does the bank exercise all six question types?"""
    assert all(count > 0 for count in real_bank.counts_by_type().values())


def test_every_note_is_reopened_by_some_question(real_bank):
    """Is every note reachable from the drill (no orphan notes)?"""
    used = {q.lesson_note for q in real_bank.questions.values()}
    assert set(real_bank.notes) == used


def test_text_is_present_in_both_languages_everywhere(real_bank):
    """Is every learner-facing text a non-empty zh-CN / en pair?"""
    texts = []
    for lesson in real_bank.lessons.values():
        texts += [lesson.title, lesson.summary]
    for skill in real_bank.skills.values():
        texts += [skill.title, skill.can_do]
    for note in real_bank.notes.values():
        texts += [note.title, note.body]
    for question in real_bank.questions.values():
        texts += [question.prompt, question.explanation]
    for text in texts:
        assert set(text) == set(LANGUAGES)
        assert all(text[lang].strip() for lang in LANGUAGES)
        # Chinese text really is Chinese; English text has no Chinese in it.
        assert re.search(r"[\u4e00-\u9fff]", text["zh-CN"])
        assert not re.search(r"[\u4e00-\u9fff]", text["en"])


def test_the_self_assessment_scale_has_the_four_levels():
    """Can learners rate each skill from 'not yet' to 'can teach it'?"""
    assert [level["level"] for level in SELF_ASSESSMENT_SCALE] == [0, 1, 2, 3]
    assert [level["zh-CN"] for level in SELF_ASSESSMENT_SCALE] == [
        "还不会",
        "看着资料能做",
        "闭卷能做",
        "能讲给别人听",
    ]
    assert [level["en"] for level in SELF_ASSESSMENT_SCALE] == [
        "not yet",
        "with notes",
        "closed-book",
        "can teach it",
    ]


def test_choice_distractors_name_real_misconceptions(real_bank):
    """Do distractors use the grader's misconception names, often enough to count?"""
    from quizsvc.grading import MISCONCEPTIONS

    named = [
        option["misconception"]
        for q in real_bank.questions.values()
        if q.type == "choice"
        for option in q.data["options"]
        if option["misconception"]
    ]
    assert set(named) <= set(MISCONCEPTIONS)
    assert len(set(named)) >= 8


def test_generated_questions_name_known_kinds_and_levels(real_bank):
    """Does every generated question point at a kind and level the generator has?"""
    from quizsvc.problems import KINDS, LEVELS, generate

    for q in real_bank.questions.values():
        if q.type == "generated":
            assert q.data["kind"] in KINDS
            assert q.data["level"] in LEVELS
            problem = generate(q.data["kind"], 7, q.data["level"])
            assert problem.kind == q.data["kind"]


# --------------------------------------------------------------------------
# The maths of every numeric answer


def _engine_value(spec: dict) -> float:
    trace = attention(
        spec["q"],
        spec["k"],
        spec["v"],
        mask=spec["mask"],
        causal=spec["causal"],
        scale=spec["scale"],
        temperature=spec["temperature"],
    )
    quantity = spec["quantity"]
    array = (
        trace.exp_unshifted()
        if quantity == "exp_unshifted"
        else getattr(trace, quantity)
    )
    return float(array[tuple(spec["index"])])


def _dot_product_moments(d: int) -> tuple[float, float]:
    """Estimate the variance and std of q·k for unit-variance components."""
    rng = np.random.default_rng(16)
    q = rng.standard_normal((100_000, d))
    k = rng.standard_normal((100_000, d))
    dots = (q * k).sum(axis=1)
    return float(dots.var()), float(dots.std())


def _check_variance_d64() -> float:
    variance, _ = _dot_product_moments(64)
    assert variance == pytest.approx(64, rel=0.03)
    return 64.0  # d independent products of variance 1·1 each


def _check_std_d64() -> float:
    _, std = _dot_product_moments(64)
    assert std == pytest.approx(8, rel=0.02)
    return math.sqrt(64)


def _check_weight_count() -> float:
    rng = np.random.default_rng(5)
    trace = attention(
        rng.normal(size=(5, 3)), rng.normal(size=(7, 3)), rng.normal(size=(7, 2))
    )
    return float(trace.weights.size)


def _check_undefined_rows() -> float:
    """Count the rows left with no visible key: left padding 2 of 5, causal."""
    padding = np.where(np.arange(5) < 2, -np.inf, 0.0)  # keys 0 and 1 hidden
    trace = attention(np.ones((5, 2)), np.ones((5, 2)), np.ones((5, 1)),
                      mask=padding, causal=True)  # fmt: skip
    return float(trace.undefined_rows.sum())


def _check_rmsnorm_std(d: int) -> float:
    """Measure q·k for RMS-normalised q and k: RMSNorm leaves the √d growth."""
    rng = np.random.default_rng(11)
    q, k = rng.standard_normal((2, 100_000, d))
    q /= np.sqrt((q**2).mean(axis=1, keepdims=True))
    k /= np.sqrt((k**2).mean(axis=1, keepdims=True))
    std = float((q * k).sum(axis=1).std())
    assert std == pytest.approx(math.sqrt(d), rel=0.02)
    return math.sqrt(d)


# Numeric answers that do not come out of one attention entry, each recomputed.
INDEPENDENT_CHECKS = {
    "l16-scaling-variance-d64": _check_variance_d64,
    "l16-scaling-std-d64": _check_std_d64,
    "l16-scaling-head-dim-128": lambda: 128**-0.5,
    "l16-masking-causal-count": lambda: float(causal_mask(5, 5).sum()),
    "l16-shapes-weight-count": _check_weight_count,
    "l16-masking-undefined-rows": lambda: _check_undefined_rows(),
    "l16-scaling-rmsnorm-std": lambda: _check_rmsnorm_std(128),
}


def _numeric_question_ids() -> list[str]:
    try:
        questions = bank.load().questions.values()
    except BankError:
        # test_the_real_bank_is_valid lists the problems; fail here too.
        return ["<the bank is invalid>"]
    return [q.id for q in questions if q.type == "numeric"]


@pytest.mark.parametrize("question_id", _numeric_question_ids())
def test_numeric_answer_agrees_with_an_independent_computation(real_bank, question_id):
    """Is every numeric answer within half its tolerance of a recomputed value?"""
    question = real_bank.questions[question_id]
    spec = question.data["attention"]
    if spec is not None:
        exact = _engine_value(spec)
    else:
        assert question.id in INDEPENDENT_CHECKS, "add a check for this answer"
        exact = INDEPENDENT_CHECKS[question.id]()
    assert (
        abs(question.data["answer"] - exact) <= question.data["tolerance"] / 2 + 1e-12
    )
    assert check_answer(question, repr(exact)).correct


def test_independent_checks_only_name_real_questions(real_bank):
    """Does every independent check still belong to a numeric question?"""
    for question_id in INDEPENDENT_CHECKS:
        assert real_bank.questions[question_id].type == "numeric"
        assert real_bank.questions[question_id].data["attention"] is None


LESSON_EXAMPLE = {"q": [[1, 0]], "k": [[1, 0], [0, 1]], "v": [[1, 0], [0, 2]]}


def _four_decimals(*arrays) -> set[str]:
    return {f"{x:.4f}" for array in arrays for x in np.ravel(array)}


def test_the_worked_example_note_quotes_the_engine(real_bank):
    """Do the numbers in the worked-example note match the engine's trace?"""
    trace = attention(**LESSON_EXAMPLE)
    equal = attention([[0, 0]], LESSON_EXAMPLE["k"], LESSON_EXAMPLE["v"])
    expected = _four_decimals(
        trace.scores,
        trace.exp_unshifted(),
        trace.exp,
        trace.exp_unshifted().sum(),
        trace.weights,
        trace.output,
    )
    body = real_bank.notes["l16-worked-example"].body
    for lang in LANGUAGES:
        quoted = set(re.findall(r"\d+\.\d{4}", body[lang]))
        assert quoted and quoted <= expected, quoted - expected
        assert "[0.5, 1.0]" in body[lang]
    assert equal.output.tolist() == [[0.5, 1.0]]


def test_the_diagnosis_question_quotes_the_engine(real_bank):
    """Do the wrong outputs in the diagnosis question come from the named mistakes?"""
    question = real_bank.questions["l16-hand-diagnose"]
    unscaled = attention(**LESSON_EXAMPLE, scale=1.0)
    trace = attention(**LESSON_EXAMPLE)
    unnormalized = trace.exp_unshifted() @ np.array(LESSON_EXAMPLE["v"])
    options = {o["id"]: o for o in question.data["options"]}
    for lang in LANGUAGES:
        for number in _four_decimals(unscaled.weights, unscaled.output):
            assert number in options["a"]["why"][lang]
        assert (
            f"[{unnormalized[0, 0]:.4f}, {unnormalized[0, 1]:g}]"
            in question.prompt[lang]
        )


# --------------------------------------------------------------------------
# What learners see, and what the sync relies on


PUBLIC_KEYS = {"id", "lesson_id", "type", "skills", "difficulty", "prompt"}
PUBLIC_EXTRA = {
    "choice": {"multiple", "options"},
    "numeric": {"tolerance"},
    "cloze": set(),
    "recall": set(),
    "ordering": {"steps"},
    "generated": {"kind", "level"},
}


@pytest.mark.parametrize("lang", [None, "zh-CN", "en"])
def test_public_dict_never_reveals_the_answer(real_bank, lang):
    """Can a learner's view of a question leak its answer or explanation?"""
    for question in real_bank.questions.values():
        public = item_types.public_dict(question, lang)
        assert set(public) == PUBLIC_KEYS | PUBLIC_EXTRA[question.type]
        dumped = json.dumps(public, ensure_ascii=False)
        for language in LANGUAGES:
            assert question.explanation[language] not in dumped
        if question.type == "choice":
            assert all(set(o) == {"id", "text"} for o in public["options"])
        if question.type == "recall":
            for language in LANGUAGES:
                assert question.data["model_answer"][language] not in dumped
        if question.type == "ordering":
            shown = [step["id"] for step in public["steps"]]
            assert shown != [step["id"] for step in question.data["steps"]]
        if lang is not None:
            assert public["prompt"] == question.prompt[lang]


def test_to_dict_is_strict_json(real_bank):
    """Is the full export JSON without NaN or infinity (masks become "-inf")?"""
    for question in real_bank.questions.values():
        text = json.dumps(question.to_dict(), allow_nan=False, ensure_ascii=False)
        assert json.loads(text)["content_hash"] == question.content_hash
    padded = real_bank.questions["l16-masking-padding-output"].to_dict()
    assert padded["data"]["attention"]["mask"] == [[0.0, 0.0, "-inf"]]


def test_presented_steps_are_stable_and_never_solved(real_bank):
    """Does an ordering question show the same scramble every time, never solved?"""
    for question in real_bank.questions.values():
        if question.type == "ordering":
            first = presented_steps(question)
            assert first == presented_steps(question)
            assert first != question.data["steps"]
            assert sorted(s["id"] for s in first) == sorted(
                s["id"] for s in question.data["steps"]
            )


# --------------------------------------------------------------------------
# A small bank to break on purpose


def test_the_mini_bank_is_valid(mini_bank):
    """Is the starting point of the broken-copy tests itself valid?"""
    root = mini_bank.write()
    loaded = bank.load(root)
    assert list(loaded.questions) == [
        "mini-choice",
        "mini-numeric",
        "mini-cloze",
        "mini-recall",
        "mini-ordering",
        "mini-generated",
    ]
    assert loaded.retired_ids == frozenset({"mini-old"})
    assert loaded.lessons["lesson-99-mini"].prerequisite_titles == {
        "lesson-98-elsewhere": {"zh-CN": "别处的课", "en": "A lesson elsewhere"}
    }


def test_one_lesson_folder_loads_on_its_own(mini_bank):
    """Can an author validate just their lesson folder?"""
    root = mini_bank.write()
    assert bank.validate(root / "lesson-99-mini") == []


def _replace(text: str, old: str, new: str) -> str:
    assert old in text, old
    return text.replace(old, new, 1)


def _line_of(text: str, marker: str, occurrence: int = 1) -> int:
    lines = [i for i, line in enumerate(text.splitlines(), start=1) if marker in line]
    return lines[occurrence - 1]


# Each case: which file to break, how, the marker of the line the problem must be
# reported on (its occurrence in the broken file), and a fragment of the message.
BROKEN = {
    "bad TOML": (
        "questions.toml",
        "answer = 0.670",
        "answer = 0.670 0.1",
        "answer = 0.670",
        "invalid TOML",
    ),
    "duplicate id": (
        "questions.toml",
        'id = "mini-cloze"',
        'id = "mini-choice"',
        ('id = "mini-choice"', 2),
        "duplicate question id 'mini-choice'",
    ),
    "reused retired id": (
        "questions.toml",
        'id = "mini-recall"',
        'id = "mini-old"',
        'id = "mini-old"',
        "was retired",
    ),
    "missing language": (
        "questions.toml",
        'prompt.en = "Explain."\n',
        "",
        'prompt.zh-CN = "解释一下。"',
        "missing the language en",
    ),
    "unknown language key": (
        "questions.toml",
        'prompt.en = "Pick one."',
        'prompt.en = "Pick one."\nprompt.zh-cn = "x"',
        'prompt.zh-cn = "x"',
        "unknown language key 'zh-cn'",
    ),
    "empty text": (
        "lesson.toml",
        'can_do.en = "I can compute scores."',
        'can_do.en = "  "',
        'can_do.en = "  "',
        "can_do.en must be non-empty",
    ),
    "unknown skill": (
        "questions.toml",
        'skills = ["mini-scores"]\nlesson_note = "mini-note"\nprompt.zh-CN = "形状',
        'skills = ["mini-scorez"]\nlesson_note = "mini-note"\nprompt.zh-CN = "形状',
        'skills = ["mini-scorez"]',
        "unknown skill 'mini-scorez'",
    ),
    "unknown note": (
        "questions.toml",
        'lesson_note = "mini-note"\nprompt.zh-CN = "算',
        'lesson_note = "mini-nope"\nprompt.zh-CN = "算',
        'lesson_note = "mini-nope"',
        "unknown note 'mini-nope'",
    ),
    "two correct in a single choice": (
        "questions.toml",
        'misconception = "no_scale"\n',
        "correct = true\n",
        "[[questions.options]]",
        "exactly one option with correct = true",
    ),
    "no correct option": (
        "questions.toml",
        'text.en = "B"\ncorrect = true',
        'text.en = "B"\nwhy.zh-CN = "错"\nwhy.en = "no"',
        "[[questions.options]]",
        "exactly one option with correct = true; found 0",
    ),
    "distractor without why": (
        "questions.toml",
        'why.zh-CN = "不对。"\nwhy.en = "Wrong."\n',
        "",
        'id = "a"',
        "missing 'why'",
    ),
    "unknown misconception": (
        "questions.toml",
        'misconception = "no_scale"',
        'misconception = "no_scaling"',
        'misconception = "no_scaling"',
        "unknown misconception 'no_scaling'",
    ),
    "misconception on a correct option": (
        "questions.toml",
        'text.en = "B"\ncorrect = true',
        'text.en = "B"\ncorrect = true\nmisconception = "no_scale"',
        ('misconception = "no_scale"', 2),
        "only a wrong option",
    ),
    "unknown kind": (
        "questions.toml",
        'kind = "scores"',
        'kind = "score"',
        'kind = "score"',
        "unknown problem kind 'score'",
    ),
    "unknown level": (
        "questions.toml",
        "level = 1",
        "level = 4",
        "level = 4",
        "unknown problem level 4",
    ),
    "cloze without accepted": (
        "questions.toml",
        'accepted = ["[Tq, Tk]"]\n',
        "",
        'id = "mini-cloze"',
        "needs 'accepted'",
    ),
    "cloze with empty accepted": (
        "questions.toml",
        'accepted = ["[Tq, Tk]"]',
        "accepted = []",
        'id = "mini-cloze"',
        "needs 'accepted'",
    ),
    "cloze without a blank": (
        "questions.toml",
        'prompt.en = "The shape is ____."',
        'prompt.en = "The shape is what?"',
        'prompt.en = "The shape is what?"',
        "needs a blank",
    ),
    "numeric disagrees with the engine": (
        "questions.toml",
        "answer = 0.670",
        "answer = 0.672",
        "answer = 0.672",
        "disagrees with the engine",
    ),
    "numeric without tolerance": (
        "questions.toml",
        "tolerance = 0.0015\n",
        "",
        'id = "mini-numeric"',
        "needs 'tolerance'",
    ),
    "attention index out of range": (
        "questions.toml",
        "index = [0, 0]",
        "index = [0, 5]",
        "[questions.attention]",
        "outside weights",
    ),
    "unknown key": (
        "questions.toml",
        "difficulty = 1",
        "dificulty = 1",
        "dificulty = 1",
        "unknown key 'dificulty'",
    ),
    "difficulty out of range": (
        "questions.toml",
        "difficulty = 1",
        "difficulty = 5",
        "difficulty = 5",
        "difficulty must be 1, 2 or 3",
    ),
    "unknown type": (
        "questions.toml",
        'type = "recall"',
        'type = "essay"',
        'type = "essay"',
        "type must be one of",
    ),
    "bad id": (
        "questions.toml",
        'id = "mini-recall"',
        'id = "Mini Recall"',
        'id = "Mini Recall"',
        "must be lowercase",
    ),
    "ordering with two steps": (
        "questions.toml",
        '[[questions.steps]]\nid = "three"\ntext.zh-CN = "三"\ntext.en = "three"\n',
        "",
        'id = "mini-ordering"',
        "at least three",
    ),
    "duplicate step": (
        "questions.toml",
        'id = "three"',
        'id = "two"',
        ('id = "two"', 2),
        "duplicate step id 'two'",
    ),
    "lesson id differs from folder": (
        "lesson.toml",
        'id = "lesson-99-mini"',
        'id = "lesson-99-other"',
        'id = "lesson-99-other"',
        "must match its folder name",
    ),
    "prerequisite without title": (
        "lesson.toml",
        'title.zh-CN = "别处的课"\ntitle.en = "A lesson elsewhere"\n',
        "",
        'id = "lesson-98-elsewhere"',
        "needs a title",
    ),
    "skill without questions": (
        "lesson.toml",
        "[[notes]]",
        '[[skills]]\nid = "mini-lonely"\ntitle.zh-CN = "孤"\n'
        'title.en = "Lonely"\ncan_do.zh-CN = "我能。"\n'
        'can_do.en = "I can."\n\n[[notes]]',
        'id = "mini-lonely"',
        "has no questions yet",
    ),
}


BROKEN.update(
    {
        "half-width comma in Chinese prose": (
            "questions.toml",
            'prompt.zh-CN = "算一个数。"',
            'prompt.zh-CN = "算一个数,保留三位小数。"',
            'prompt.zh-CN = "算一个数,保留三位小数。"',
            "half-width ','",
        ),
        "half-width parentheses around Chinese": (
            "questions.toml",
            'prompt.zh-CN = "选一个。"',
            'prompt.zh-CN = "选一个(单选)。"',
            'prompt.zh-CN = "选一个(单选)。"',
            "half-width parentheses",
        ),
        "full-width punctuation in English": (
            "questions.toml",
            'prompt.en = "Pick one."',
            'prompt.en = "Pick one，quickly。"',
            'prompt.en = "Pick one，quickly。"',
            "English text uses full-width",
        ),
        "a brace in mathematics": (
            "questions.toml",
            'explanation.en = "Pick b."',
            'explanation.en = "Pick e^{b}."',
            'explanation.en = "Pick e^{b}."',
            "would show as typed",
        ),
        "an unclosed power": (
            "questions.toml",
            'explanation.en = "The weight."',
            'explanation.en = "The weight e^(0.5."',
            'explanation.en = "The weight e^(0.5."',
            "has no exponent",
        ),
        "a caret with nothing after it": (
            "questions.toml",
            'explanation.en = "The weight."',
            'explanation.en = "The weight e^ 2."',
            'explanation.en = "The weight e^ 2."',
            "has no exponent",
        ),
    }
)


@pytest.mark.parametrize("case", list(BROKEN), ids=list(BROKEN))
def test_each_problem_is_reported_at_its_line(mini_bank, case):
    """Does a broken copy give `path:line: message` pointing at the culprit?"""
    file_name, old, new, marker, fragment = BROKEN[case]
    texts = {"lesson.toml": mini_bank.lesson, "questions.toml": mini_bank.questions}
    texts[file_name] = _replace(texts[file_name], old, new)
    root = mini_bank.write(texts["lesson.toml"], texts["questions.toml"])
    marker, occurrence = marker if isinstance(marker, tuple) else (marker, 1)
    expected_line = _line_of(texts[file_name], marker, occurrence)

    problems = bank.validate(root)

    matching = [p for p in problems if fragment in p.message]
    assert matching, [str(p) for p in problems]
    assert matching[0].path.endswith(f"lesson-99-mini/{file_name}")
    assert matching[0].line == expected_line, str(matching[0])
    assert str(matching[0]) == (
        f"{matching[0].path}:{expected_line}: {matching[0].message}"
    )
    with pytest.raises(BankError) as raised:
        bank.load(root)
    assert raised.value.problems == problems


def _split_off(questions: str, question_id: str) -> tuple[str, str]:
    """Cut one [[questions]] entry out of a file: (the rest, the entry)."""
    entries = questions.split("[[questions]]\n")
    (entry,) = [e for e in entries if e.startswith(f'id = "{question_id}"')]
    rest = "[[questions]]\n".join(e for e in entries if e is not entry)
    return rest, "[[questions]]\n" + entry


def test_a_duplicate_across_files_names_the_first_place(mini_bank):
    """Does a duplicate id say where the id was first used?"""
    _, copy = _split_off(mini_bank.questions, "mini-cloze")
    root = mini_bank.write(extra={"zz-more.toml": copy})
    problems = bank.validate(root)
    assert len(problems) == 1
    assert problems[0].path.endswith("zz-more.toml")
    assert problems[0].line == 2
    first_line = _line_of(mini_bank.questions, 'id = "mini-cloze"')
    assert f"questions.toml:{first_line})" in problems[0].message


def test_text_that_looks_like_toml_inside_a_long_string_is_not_a_key(mini_bank):
    """Does a paragraph starting with "[[questions.options]]" not fool the lines?"""
    tricky = _replace(
        mini_bank.questions,
        'prompt.en = "Pick one."',
        'prompt.en = """\nPick one, given\n[[questions.options]]\nid = "a"\n"""',
    )
    broken = _replace(tricky, 'why.zh-CN = "不对。"\nwhy.en = "Wrong."\n', "")
    (problem,) = bank.validate(mini_bank.write(questions=broken))
    assert "missing 'why'" in problem.message
    assert problem.line == _line_of(broken, 'id = "a"', occurrence=2)


def test_a_file_that_is_not_utf8_is_a_problem(mini_bank):
    """Is a file saved in another encoding reported instead of crashing?"""
    root = mini_bank.write()
    (root / "lesson-99-mini" / "more.toml").write_bytes("题".encode("gb18030"))
    (problem,) = bank.validate(root)
    assert problem.path.endswith("more.toml") and "not UTF-8" in problem.message


def test_a_folder_without_lesson_toml_is_a_problem(mini_bank):
    """Is a stray lesson folder reported, and a _draft folder ignored?"""
    root = mini_bank.write()
    (root / "lesson-100-half").mkdir()
    (root / "_drafts").mkdir()
    (problem,) = bank.validate(root)
    assert problem.path.endswith("lesson-100-half")
    assert "without lesson.toml" in problem.message


def test_an_empty_folder_has_no_lessons(tmp_path):
    """Does validating an empty folder say that nothing was found?"""
    (problem,) = bank.validate(tmp_path)
    assert "no lessons found" in problem.message


INLINE_OPTIONS = """\
options = [
  { id = "a", text = { zh-CN = "甲", en = "A" }, why = { zh-CN = "不对", en = "No" } },
  { id = "b", text = { zh-CN = "乙", en = "B" }, correct = true },
]

"""


def test_options_may_be_written_as_inline_tables(mini_bank):
    """Do inline option tables load, and point at the options line when wrong?"""
    questions = mini_bank.questions
    options = questions[
        questions.index("[[questions.options]]") : questions.index(
            '[[questions]]\nid = "mini-numeric"'
        )
    ]
    inline = _replace(questions, options, INLINE_OPTIONS)
    assert bank.validate(mini_bank.write(questions=inline)) == []

    two_right = _replace(
        inline, 'why = { zh-CN = "不对", en = "No" }', "correct = true"
    )
    (problem,) = bank.validate(mini_bank.write(questions=two_right, under="second"))
    assert problem.line == _line_of(two_right, "options = [")
    assert "exactly one option" in problem.message


def test_content_hash_follows_the_content_not_the_file(mini_bank):
    """Does the sync see an edit, and only an edit, as a change?"""
    original = bank.load(mini_bank.write(under="a")).questions
    rest, cloze = _split_off(mini_bank.questions, "mini-cloze")
    moved = bank.load(
        mini_bank.write(under="b", questions=rest, extra={"other.toml": cloze})
    ).questions
    edited_text = _replace(mini_bank.questions, "Compute a number.", "Compute one.")
    edited = bank.load(mini_bank.write(under="c", questions=edited_text)).questions

    assert {k: q.content_hash for k, q in original.items()} == {
        k: q.content_hash for k, q in moved.items()
    }
    assert edited["mini-numeric"].content_hash != original["mini-numeric"].content_hash
    assert edited["mini-cloze"].content_hash == original["mini-cloze"].content_hash


def test_problems_print_as_path_line_message():
    """Is a problem printed the way editors jump to it?"""
    assert str(Problem("questions/a.toml", 12, "boom")) == "questions/a.toml:12: boom"


def test_the_loader_is_pure():
    """Does loading the bank stay clear of Flask and the database?"""
    import subprocess
    import sys

    script = (
        "import sys, quizsvc.bank as b; b.load(); "
        "print(sorted(m for m in ('flask', 'sqlalchemy', 'click') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"


# --------------------------------------------------------------------------
# Checking typed answers


def test_every_checkable_question_accepts_its_own_answer(real_bank):
    """Does the expected answer of every question score 1?"""
    for question in real_bank.questions.values():
        if question.type == "choice":
            answer = [o["id"] for o in question.data["options"] if o["correct"]]
        elif question.type == "numeric":
            answer = str(question.data["answer"])
        elif question.type == "cloze":
            for accepted in question.data["accepted"]:
                assert check_answer(question, accepted).correct, accepted
            answer = question.data["accepted"][0]
        elif question.type == "ordering":
            answer = [step["id"] for step in question.data["steps"]]
        else:
            continue
        result = check_answer(question, answer)
        assert (result.correct, result.score) == (True, 1.0), question.id
        assert check_answer(question, result.expected).correct, question.id


SHAPE_SPELLINGS = [
    "[Tq,Tk]",
    "[Tq, Tk]",
    "(Tq, Tk)",
    "Tq×Tk",
    "Tq x Tk",
    "tq × tk",
    "［Ｔｑ，Ｔｋ］",
    "（Tq，Tk）",
    "[T_q, T_k]",
    "  [ Tq ,Tk ]  ",
    "Tq ×Tk",
]


@pytest.mark.parametrize("spelling", SHAPE_SPELLINGS)
def test_every_spelling_of_a_shape_is_the_same_shape(spelling):
    """Are [Tq,Tk], (Tq, Tk), Tq×Tk and Tq x Tk one answer?"""
    assert canonical_answer(spelling) == canonical_answer("[Tq, Tk]") == "(tq,tk)"


@pytest.mark.parametrize("other", ["[Tk, Tq]", "[Tq, d]", "[Tq]", "Tq", "TqTk"])
def test_different_shapes_stay_different(other):
    """Does folding spellings never merge genuinely different answers?"""
    assert canonical_answer(other) != canonical_answer("[Tq, Tk]")


DIM = st.from_regex(r"[A-Za-z][A-Za-z0-9]{0,3}", fullmatch=True).filter(
    lambda s: s.lower() != "x"
)


@settings(max_examples=150, deadline=None)
@given(
    dims=st.lists(DIM, min_size=2, max_size=4),
    style=st.integers(0, 3),
    spaces=st.sampled_from(["", " ", "  "]),
)
def test_shape_spellings_agree_for_any_dimensions(dims, style, spaces):
    """For any dimension names, do the four shape notations canonicalize alike?"""
    comma = "," + spaces
    spelled = [
        "[" + comma.join(dims) + "]",
        "(" + comma.join(dims) + ")",
        f"{spaces}×{spaces}".join(dims),
        " x ".join(dims),
    ][style]
    assert canonical_answer(spelled) == "(" + ",".join(d.lower() for d in dims) + ")"


def _question(kind: str, **data) -> bank.Question:
    text = {"zh-CN": "题", "en": "q"}
    return bank.Question(
        id="t",
        lesson_id="l",
        type=kind,
        skills=("s",),
        prompt=text,
        explanation=text,
        lesson_note="n",
        difficulty=None,
        data=data,
        content_hash="",
    )


NUMERIC = _question("numeric", answer=-0.25, tolerance=0.001, attention=None)


@pytest.mark.parametrize(
    "typed",
    ["-0.25", "−0.25", "－０．２５", " -0.250 ", "-1/4", "−25%", "≈ -0.2504", "-0.249"],
)
def test_numeric_answers_are_read_as_people_type_them(typed):
    """Are full-width digits, Unicode minus, fractions and percentages understood?"""
    assert check_answer(NUMERIC, typed).correct


ROOT_HALF = _question("numeric", answer=0.7071, tolerance=0.00025, attention=None)


@pytest.mark.parametrize(
    "typed", ["√2/2", "1/sqrt(2)", "1/√2", "√(1/2)", "０．７０７１", "2^-0.5", "√2 / 2"]
)
def test_numeric_answers_may_be_expressions_as_the_hint_promises(typed):
    """Are √, sqrt() and full-width digits read by the one expression parser?"""
    assert check_answer(ROOT_HALF, typed).correct


@pytest.mark.parametrize("typed", ["6/√2", "3√2", "3*sqrt(2)", "√18"])
def test_a_numeric_answer_written_with_a_root_is_its_value(typed):
    """Does 6/√2 count as 4.2426, as generated problems already read it?"""
    question = _question("numeric", answer=4.2426, tolerance=0.00025, attention=None)
    assert check_answer(question, typed).correct


@pytest.mark.parametrize("typed", ["√2", "2/√2", "1/2"])
def test_a_wrong_expression_is_wrong_not_unreadable(typed):
    """Is a readable but wrong expression graded wrong (a lapse), not asked again?"""
    result = check_answer(ROOT_HALF, typed)
    assert not result.correct and "invalid" not in result.detail


@pytest.mark.parametrize(
    "typed", ["", "abc", "1/0", "nan", "inf", "--1", "√-2", "sqrt(", "2 ** ** 2"]
)
def test_unreadable_numbers_ask_again(typed):
    """Is text that is not a number flagged invalid rather than silently wrong?"""
    result = check_answer(NUMERIC, typed)
    assert not result.correct and set(result.detail["invalid"]) == set(LANGUAGES)


@settings(max_examples=200, deadline=None)
@given(answer=st.floats(-1e3, 1e3), tolerance=st.floats(0, 1), offset=st.floats(-3, 3))
def test_numeric_tolerance_is_an_absolute_band(answer, tolerance, offset):
    """Is a value correct exactly when it lies within the tolerance?"""
    question = _question("numeric", answer=answer, tolerance=tolerance, attention=None)
    value = answer + offset
    assume(abs(abs(offset) - tolerance) > 1e-6)
    result = check_answer(question, value)
    assert result.correct == (abs(value - answer) <= tolerance)
    assert result.score == (1.0 if result.correct else 0.0)


def _choice(multiple: bool, correct: set[str]) -> bank.Question:
    text = {"zh-CN": "项", "en": "option"}
    options = [
        {
            "id": oid,
            "text": text,
            "correct": oid in correct,
            "why": None if oid in correct else {"zh-CN": "错", "en": "wrong"},
            "misconception": None if oid in correct else "no_scale",
        }
        for oid in "abcde"
    ]
    return _question("choice", multiple=multiple, options=options)


@pytest.mark.parametrize("typed", ["b", "B", " b ", "ｂ", ["b"], ("B",)])
def test_a_single_choice_is_read_in_any_case_or_width(typed):
    """Is option b recognised however it is typed?"""
    assert check_answer(_choice(False, {"b"}), typed).correct


def test_a_wrong_pick_names_its_misconception_and_explains_itself():
    """Does picking a known mistake tell the learner (and the export) which one?"""
    result = check_answer(_choice(False, {"b"}), "a")
    assert not result.correct and result.score == 0
    assert result.detail["misconceptions"] == ["no_scale"]
    assert result.detail["why_wrong"] == {"a": {"zh-CN": "错", "en": "wrong"}}
    assert result.expected == "b"


@pytest.mark.parametrize(
    ("typed", "fragment"),
    [
        ("z", "No such option"),
        ("", "Choose an option"),
        ("a, b", "exactly one option"),
        (3, "Choose an option"),
    ],
)
def test_unreadable_choices_ask_again(typed, fragment):
    """Is an impossible choice answer flagged invalid, with a reason?"""
    result = check_answer(_choice(False, {"b"}), typed)
    assert not result.correct and fragment in result.detail["invalid"]["en"]


@settings(max_examples=200, deadline=None)
@given(
    correct=st.sets(st.sampled_from("abcde"), min_size=1, max_size=4),
    picked=st.sets(st.sampled_from("abcde"), min_size=1),
)
def test_multiple_choice_scores_right_minus_wrong(correct, picked):
    """Is a multiple answer correct only as the exact set, scored fairly otherwise?"""
    question = _choice(True, correct)
    typed = "、".join(sorted(picked, reverse=True))
    result = check_answer(question, typed)
    assert result.correct == (picked == correct)
    expected = max(0.0, (len(picked & correct) - len(picked - correct)) / len(correct))
    assert result.score == pytest.approx(1.0 if picked == correct else expected)
    assert 0.0 <= result.score <= 1.0


ORDERING = _question(
    "ordering",
    steps=[
        {"id": s, "text": {"zh-CN": s, "en": s}}
        for s in ["dot", "scale", "exp", "sum", "div"]
    ],
)


@pytest.mark.parametrize(
    "typed",
    [
        "dot, scale, exp, sum, div",
        "dot → scale → exp → sum → div",
        "dot -> scale -> exp -> sum -> div",
        "DOT scale exp sum div",
        ["dot", "scale", "exp", "sum", "div"],
    ],
)
def test_an_order_may_be_typed_with_arrows_commas_or_spaces(typed):
    """Is the right order recognised in every usual notation?"""
    assert check_answer(ORDERING, typed).correct


@settings(max_examples=120, deadline=None)
@given(order=st.permutations(["dot", "scale", "exp", "sum", "div"]))
def test_an_order_scores_the_share_of_pairs_in_order(order):
    """Is only the exact order correct, with partial credit by ordered pairs?"""
    result = check_answer(ORDERING, list(order))
    steps = ["dot", "scale", "exp", "sum", "div"]
    pairs = [(a, b) for i, a in enumerate(steps) for b in steps[i + 1 :]]
    in_order = sum(order.index(a) < order.index(b) for a, b in pairs)
    assert result.correct == (order == steps)
    assert result.score == pytest.approx(in_order / len(pairs))
    if not result.correct:
        first = result.detail["first_wrong"]
        assert order[:first] == steps[:first] and order[first] != steps[first]


def test_an_incomplete_order_names_steps_as_the_learner_sees_them(real_bank):
    """Does a missing or repeated step show its text in each language, not its id?"""
    question = real_bank.questions["l16-softmax-stable-order"]
    result = check_answer(question, "max, max, exp, sum, divide")
    invalid = result.detail["invalid"]
    assert invalid["zh-CN"] == (
        "每个步骤恰好用一次；缺少：每个分数减去 m；重复：找出这一行的最大值 m。"
    )
    assert invalid["en"] == (
        "Use every step exactly once; missing: Subtract m from every score; "
        "repeated: Find the row's maximum m."
    )


def test_reversing_the_steps_scores_zero():
    """Does the fully reversed order earn nothing?"""
    result = check_answer(ORDERING, "div sum exp scale dot")
    assert result.score == 0.0


@pytest.mark.parametrize(
    ("typed", "fragment"),
    [
        ("dot scale exp sum", "missing: div"),
        ("dot scale exp sum div div", "repeated: div"),
        ("dot scale exp sum mul", "unknown steps: mul"),
        ("", "List every step"),
    ],
)
def test_an_incomplete_order_asks_again(typed, fragment):
    """Is a missing, repeated or unknown step reported instead of graded?"""
    result = check_answer(ORDERING, typed)
    assert not result.correct and fragment in result.detail["invalid"]["en"]


CLOZE = _question("cloze", accepted=["-0.5", "-1/2"])


@pytest.mark.parametrize("typed", ["-0.5", "−0.5", "－0.5", " -0.5 ", "-1/2", "−1／2"])
def test_cloze_answers_fold_minus_signs_and_widths(typed):
    """Is a cloze answer compared after folding Unicode minus and full width?"""
    assert check_answer(CLOZE, typed).correct


def test_a_wrong_cloze_is_wrong_and_an_empty_one_asks_again():
    """Is a wrong fill wrong, and an empty fill a prompt to try again?"""
    assert not check_answer(CLOZE, "0.5").correct
    assert "invalid" not in check_answer(CLOZE, "0.5").detail
    assert "invalid" in check_answer(CLOZE, "  ").detail


@pytest.mark.parametrize("kind", ["recall", "generated"])
def test_recall_and_generated_are_not_checked_here(kind):
    """Is asking to check a self-rated or generated question a programming error?"""
    with pytest.raises(ValueError, match="not checked here"):
        check_answer(_question(kind), "anything")


@settings(max_examples=100, deadline=None)
@given(text=st.text(max_size=40))
def test_canonical_answer_is_idempotent(text):
    """Does folding an already folded answer change nothing?"""
    once = canonical_answer(text)
    assert canonical_answer(once) == once


# --------------------------------------------------------------------------
# Warnings: cues that let a learner guess


WARNED = {
    "the correct option is the longest": (
        'text.zh-CN = "乙"',
        'text.zh-CN = "乙，而且说得最长最细"',
        'text.zh-CN = "乙，而且说得最长最细"',
        "the correct option is the longest in zh-CN",
    ),
    "a cloze prompt holds its answer": (
        'prompt.en = "The shape is ____."',
        'prompt.en = "S is [Tq, Tk]: the shape is ____."',
        'prompt.en = "S is [Tq, Tk]: the shape is ____."',
        "contains its own answer '[Tq, Tk]'",
    ),
    "a scale that is 1/d lets scale_by_d through": (
        "answer = 0.670\ntolerance = 0.0015\n\n[questions.attention]\n",
        "answer = 0.622\ntolerance = 0.0015\n\n[questions.attention]\nscale = 0.5\n",
        "[questions.attention]",
        "the mistake scale_by_d gives 0.622459",
    ),
    "a mistake lands within the tolerance": (
        "answer = 0.670\ntolerance = 0.0015\n",
        "answer = 0.670\ntolerance = 0.2\n",
        "[questions.attention]",
        "the mistake no_scale gives 0.731059",
    ),
}


def test_the_mini_bank_has_no_warnings(mini_bank):
    """Is the starting point of the warning tests free of guessable cues?"""
    assert bank.lint(mini_bank.write()) == []


@pytest.mark.parametrize("case", list(WARNED), ids=list(WARNED))
def test_each_cue_is_a_warning_at_its_line(mini_bank, case):
    """Is a guessable cue reported at its line, without making the bank invalid?"""
    old, new, marker, fragment = WARNED[case]
    questions = _replace(mini_bank.questions, old, new)
    root = mini_bank.write(questions=questions)

    assert bank.validate(root) == []
    warnings = [w for w in bank.lint(root) if fragment in w.message]
    assert warnings, [str(w) for w in bank.lint(root)]
    assert warnings[0].line == _line_of(questions, marker, 1)


def test_the_real_bank_has_no_warnings(real_bank):
    """Is today's bank free of the cues the validator warns about?"""
    assert [str(w) for w in bank.lint()] == []


def test_a_mistake_that_differs_from_the_key_is_not_a_warning():
    """Does a classic mistake well outside the tolerance stay quiet?"""
    from quizsvc.bank.lint import mistakes_within_tolerance

    spec = {
        "q": [[0, 2, 0, 0]],
        "k": [[1, 0, 0, 0], [0, 1, 0, 0]],
        "v": [[4, 0], [0, 4]],
        "mask": None,
        "causal": False,
        "scale": None,
        "temperature": 1.0,
        "quantity": "output",
        "index": [0, 1],
    }
    assert mistakes_within_tolerance(spec, 2.924, 0.0015) == []
    two_dims = {**spec, "q": [[0, 2]], "k": [[1, 0], [0, 1]], "scale": 0.5}
    assert any(
        "scale_by_d" in message
        for message in mistakes_within_tolerance(two_dims, 2.924, 0.0015)
    )


@pytest.mark.parametrize("kind", sorted(__import__("quizsvc.problems").problems.KINDS))
def test_generated_prompts_follow_the_punctuation_rules(kind):
    """Do the generator's prompts use full-width punctuation in Chinese prose?"""
    from quizsvc.bank.lint import math_markup, punctuation
    from quizsvc.problems import LEVELS, generate

    def texts(value, language=None):
        if isinstance(value, dict):
            for key, inner in value.items():
                yield from texts(inner, key if key in LANGUAGES else language)
        elif isinstance(value, (list, tuple)):
            for inner in value:
                yield from texts(inner, language)
        elif isinstance(value, str) and language:
            yield language, value

    for level in LEVELS:
        for seed in range(3):
            problem = generate(kind, seed, level).to_dict()
            for language, text in texts(problem):
                assert punctuation(text, language) + math_markup(text) == [], text
