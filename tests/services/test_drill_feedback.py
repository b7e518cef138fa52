"""Feedback a learner can act on: their own answer marked cell by cell, options
and steps named as shown, messages that fit, and pages that are never dead ends."""

from __future__ import annotations

import re

import pytest

from quizsvc import grading, problems
from tests.factories import open_for, real_bank

GENERATED = "l16-hand-generated-small"


@pytest.fixture
def app(page_app):
    return page_app


@pytest.fixture
def client(learner_client):
    return learner_client


def _grid_form(problem, answers: dict, item_id: str = GENERATED) -> dict:
    form = {"item_id": item_id}
    for ask in problem.ask:
        value = answers[ask.name]
        if ask.format in ("matrix", "boolean_matrix"):
            for i, row in enumerate(value):
                for j, cell in enumerate(row):
                    form[f"cell-{ask.name}-{i}-{j}"] = (
                        "未定义" if cell is None else str(cell)
                    )
        else:
            form[f"answer-{ask.name}"] = str(value)
    return form


def _answer_generated(
    client, app, learner, answers, item_id=GENERATED, kind="attention"
) -> str:
    open_for(app, learner, item_id, problem_kind=kind, problem_seed=11, problem_level=1)
    problem = problems.generate(kind, 11, 1)
    response = client.post("/drill/answer", data=_grid_form(problem, answers, item_id))
    assert response.status_code == 302, response.get_data(as_text=True)
    return response.location


def test_a_wrong_generated_answer_shows_the_learners_grid_marked_before_and_after(
    client, app, learner
):
    """Before the explanation, are the learner's own cells shown with ✓/✗ and no
    right value; after it, beside the correct values, with the mistake named
    once and its sentence said once (issue 20 part 4)?"""
    problem = problems.generate("attention", 11, 1)
    answers = {a.name: problem.answer_json(a.name) for a in problem.ask}
    answers["S"] = problem.pipelines["no_scale"]["S"].tolist()
    result = _answer_generated(client, app, learner, answers)
    before = client.get(result).get_data(as_text=True)
    # Before the why: the learner's own cells with ✓/✗, nothing more.
    own = before[before.index('id="your-answer"') : before.index('id="why-form"')]
    assert re.search(r'<td class="bad">\s*<input[^>]*name="cell-S-0-0"', own)
    assert f'value="{answers["S"][0][0]}"' in own
    assert "The correct answer" not in before and "正确答案" not in before
    assert grading.MISCONCEPTION_TITLES["no_scale"]["zh-CN"] not in before
    client.post(f"{result}/explain", data={"why": "忘了除以 √d"})
    html = client.get(f"{result}?lang=en").get_data(as_text=True)
    grid = html[html.index('id="your-answer"') : html.index('class="reveal"')]
    assert re.search(r'<td class="bad">\s*<input[^>]*name="cell-S-0-0"', grid)
    assert 'class="ok"' in grid
    first = answers["S"][0][0]
    assert f'value="{first}"' in grid  # the learner's own number, as typed
    assert "The correct answer" in html
    sentence = grading.MISCONCEPTIONS["no_scale"]["en"].replace("'", "&#39;")
    assert html.count(sentence) == 1
    assert grading.MISCONCEPTION_TITLES["no_scale"]["en"] in html
    assert "<code>no_scale</code>" not in html


def test_an_all_correct_answer_claims_no_carried_credit(client, app, learner):
    """Is "consistent with your earlier step" kept for steps that were wrong?"""
    problem = problems.generate("attention", 11, 1)
    answers = {a.name: problem.answer_json(a.name) for a in problem.ask}
    result = _answer_generated(client, app, learner, answers)
    html = client.get(f"{result}?lang=en").get_data(as_text=True)
    assert "✓" in html and "credit carried forward" not in html
    # Steps are named by their labels, never by internal names.
    assert "scores S" in html or "Scores S" in html


def test_precision_only_faults_are_said_in_the_drill(client, app, learner):
    """Right to 2 decimals where 4 are asked: is it said as just that?"""
    problem = problems.generate("lesson_example", 11, 1)
    answers = {a.name: problem.answer_json(a.name) for a in problem.ask}
    answers["S"] = [[round(x, 2) for x in row] for row in answers["S"]]
    result = _answer_generated(
        client, app, learner, answers, "l16-hand-generated-lesson", "lesson_example"
    )
    client.post(f"{result}/explain", data={"why": "只写了两位小数"})
    html = client.get(result).get_data(as_text=True)
    assert "只保留了 2 位小数" in html


def test_choice_results_name_options_as_shown(client, app):
    """Are options named by their text, never by letters the learner never saw?"""
    question = next(
        q
        for q in real_bank().questions.values()
        if q.type == "choice" and not q.data["multiple"]
    )
    wrong = next(o for o in question.data["options"] if not o["correct"])
    right = next(o for o in question.data["options"] if o["correct"])
    learner = 1
    open_for(app, learner, question.id)
    response = client.post(
        "/drill/answer", data={"item_id": question.id, "answer": wrong["id"]}
    )
    result = response.location
    before = client.get(result).get_data(as_text=True)
    assert wrong["text"]["zh-CN"] in before and right["text"]["zh-CN"] not in before
    client.post(f"{result}/explain", data={"why": "我以为是这个选项"})
    after = client.get(result).get_data(as_text=True)
    assert right["text"]["zh-CN"] in after
    letters = "|".join(o["id"] for o in question.data["options"])
    assert not re.search(rf"<strong>({letters})</strong>", after)
    assert not re.search(rf"\b({letters}) · ", after)


def test_an_ordering_with_a_step_twice_keeps_the_picks_and_names_the_steps(
    client, app, learner
):
    question = next(q for q in real_bank().questions.values() if q.type == "ordering")
    steps = question.data["steps"]
    open_for(app, learner, question.id)
    picks = {f"order-{i}": s["id"] for i, s in enumerate(steps)}
    picks["order-1"] = steps[0]["id"]  # the first step twice, the second missing
    response = client.post("/drill/answer", data={"item_id": question.id, **picks})
    html = response.get_data(as_text=True)
    assert response.status_code == 400
    error = re.search(r'id="answer-error">([^<]*)<', html).group(1)
    assert steps[0]["text"]["zh-CN"] in error and steps[1]["text"]["zh-CN"] in error
    assert steps[0]["id"] not in error and steps[1]["id"] not in error
    for i, step_id in picks.items():
        select = re.search(rf'<select id="{i}".*?</select>', html, re.S).group(0)
        assert re.search(rf'value="{step_id}" selected', select), i


def test_the_explanation_box_counts_and_refuses_too_long_in_chinese(
    client, app, learner
):
    question = next(q for q in real_bank().questions.values() if q.type == "choice")
    wrong = next(o for o in question.data["options"] if not o["correct"])
    open_for(app, learner, question.id)
    result = client.post(
        "/drill/answer", data={"item_id": question.id, "answer": wrong["id"]}
    ).location
    html = client.get(result).get_data(as_text=True)
    assert 'maxlength="4000"' in html and 'id="why-count"' in html
    assert "drill.js" in html and "<script>" not in html  # no inline script
    refused = client.post(f"{result}/explain", data={"why": "长" * 4001})
    assert refused.status_code == 400
    assert "解释最多 4000 个字符" in refused.get_data(as_text=True)


def test_a_too_large_form_gets_a_way_back(client, app):
    page = client.post(
        "/drill/answer",
        data={"answer": "x" * 400_000},
        headers={"Referer": "http://localhost/drill"},
    )
    html = page.get_data(as_text=True)
    assert page.status_code == 413
    assert re.search(r'id="way-back"', html) and 'href="http://localhost/drill"' in html
    elsewhere = client.post(
        "/drill/answer",
        data={"answer": "x" * 400_000},
        headers={"Referer": "https://evil.example/"},
    ).get_data(as_text=True)
    assert "evil.example" not in elsewhere


def test_the_rate_limit_page_speaks_the_learners_language(app):
    app.config["LOGIN_RATE_LIMIT"] = "1 per minute"
    client = app.test_client()
    for _ in range(2):
        page = client.post("/login", data={"username": "x", "password": "y"})
    html = page.get_data(as_text=True)
    assert page.status_code == 429
    assert "per 1 minute" not in html and 'id="way-back"' in html


def test_a_self_assessment_error_is_shown_where_the_learner_looks(client):
    """Does the page come back scrolled to the skill, its error above the levels?"""
    skill = next(iter(real_bank().skills))
    page = client.post(f"/assess/{skill}", data={"level": "9"})
    html = page.get_data(as_text=True)
    assert page.status_code == 400
    assert f'action="/assess/{skill}#skill-{skill}"' in html
    section = html[html.index(f'id="skill-{skill}"') :]
    assert section.index(f'id="error-{skill}"') < section.index('name="level"')
