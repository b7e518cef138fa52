"""The progress page and its charts: retention, calendar, forecast, mistakes."""

from __future__ import annotations

import re
from datetime import date, timedelta

import pytest

from quizsvc import grading
from quizsvc.web.charts import calendar_heatmap_svg, column_chart_svg, labelled_bars_svg
from tests.factories import generated_question, graded_item, make_learner, record


@pytest.fixture
def app(page_app):
    return page_app


@pytest.fixture
def client(learner_client):
    return learner_client


def record_all(app, user_id: int, answers: list[tuple]) -> None:
    """Store answers (item, right?, how long ago, extra fields), oldest first."""
    for item_id, correct, ago, extra in sorted(answers, key=lambda a: -a[2]):
        record(app, user_id, item_id, correct, ago, **extra)


def test_signed_out_visitors_are_sent_to_log_in(app):
    response = app.test_client().get("/progress")
    assert response.status_code == 302 and "/login" in response.location


def test_a_new_learner_sees_empty_but_whole_charts(client):
    response = client.get("/progress?lang=en")
    html = response.get_data(as_text=True)
    assert response.status_code == 200
    assert re.search(r'id="reviews-total">0<', html)
    assert '<svg class="calendar"' in html and '<svg class="columns"' in html
    assert '<svg class="bars labelled"' not in html  # nothing to chart yet
    assert "No skill has a reviewed card yet" in html
    assert "No wrong answers in the last 30 days." in html
    days = re.findall(r'<rect class="day" data-date="([\d-]+)" data-count="0"', html)
    assert 78 <= len(days) <= 84
    assert date.fromisoformat(days[0]).weekday() == 0


def test_the_record_shows_in_every_chart_and_table(client, app, learner):
    item, other = graded_item("temperature"), graded_item("scores")
    record_all(
        app,
        learner,
        [
            (item, True, timedelta(days=3), {}),
            (item, False, timedelta(days=2), {"misconception": "no_scale"}),
            (other, False, timedelta(days=1), {"misconception": "no_scale"}),
            (other, True, timedelta(hours=1), {}),
        ],
    )
    html = client.get("/progress?lang=en").get_data(as_text=True)
    assert re.search(r'id="reviews-total">4<', html)
    # Retention: a bar for each skill with cards, and the table for all skills.
    assert html.count('<rect class="bar"') == 2
    row = re.search(r'<tr data-skill="temperature">.*?</tr>', html, re.S).group(0)
    assert "1/2 (50%)" in row
    # Calendar: four answers on up to four days, each with a tooltip.
    counts = [int(c) for c in re.findall(r'data-count="(\d+)"', html)]
    assert sum(counts) == 4
    assert re.search(r"<title>[^<]*: 1 answer</title>", html)
    assert html.count("<tr><td><time datetime=") >= 3  # the list of busy days
    # Forecast: fourteen columns, as a chart and as a table.
    assert html.count('<rect class="column"') == 14
    assert len(re.findall(r"<tr><td><time datetime=\"[\d-]+\">", html)) >= 14
    # Mistakes: grouped under the misconception, with its explanation.
    group = re.search(
        r'<li class="mistake" data-misconception="no_scale">.*?</ul>', html, re.S
    ).group(0)
    assert "× 2" in group
    assert grading.MISCONCEPTIONS["no_scale"]["en"].replace("'", "&#39;") in html


def test_a_generated_mistake_links_back_to_its_problem(client, app, learner):
    question = generated_question()
    kind, level = question.data["kind"], question.data["level"]
    record(
        app,
        learner,
        question.id,
        False,
        timedelta(hours=2),
        misconception="no_softmax",
        problem_kind=kind,
        problem_level=level,
        problem_seed=77,
    )
    html = client.get("/progress").get_data(as_text=True)
    assert f'href="/practice/{kind}/{level}/77"' in html


def test_only_the_learners_own_record_counts(client, app, learner):
    other = make_learner(app, "bo")
    record(
        app,
        other,
        graded_item("scores"),
        False,
        timedelta(hours=1),
        misconception="mask_ignored",
    )
    html = client.get("/progress").get_data(as_text=True)
    assert re.search(r'id="reviews-total">0<', html)
    assert "mask_ignored" not in html


# --- the charts ---------------------------------------------------------------


def test_calendar_puts_weeks_in_columns_and_mondays_on_top():
    days = [date(2025, 2, 10) + timedelta(days=n) for n in range(24)]  # Monday on
    counts = [n % 3 for n in range(24)]
    svg = str(
        calendar_heatmap_svg(
            days,
            counts,
            title="Answers",
            desc="24 days",
            today=days[-1],
            weekday_labels=["Mon", "", "Wed", "", "Fri", "", ""],
            month_labels=[f"M{n}" for n in range(1, 13)],
            cell_titles=[f"{d}: {c}" for d, c in zip(days, counts, strict=True)],
        )
    )
    assert "<title>Answers</title><desc>24 days</desc>" in svg
    cells = re.findall(r'data-date="([\d-]+)"[^>]*x="(\d+)" y="(\d+)"', svg)
    position = {day: (int(x), int(y)) for day, x, y in cells}
    monday, sunday, next_monday = "2025-02-24", "2025-03-02", "2025-03-03"
    assert position[monday][0] == position[sunday][0]  # one week, one column
    assert position[monday][1] < position[sunday][1]
    assert position[next_monday][0] > position[monday][0]
    assert position[next_monday][1] == position[monday][1]
    # February over the first week, March over the week holding 1 March.
    labels = re.findall(r'<text x="(\d+)" y="12" class="axis">(M\d+)</text>', svg)
    assert labels == [
        (str(position["2025-02-10"][0]), "M2"),
        (str(position[monday][0]), "M3"),
    ]
    assert svg.count('stroke-width="2"') == 1  # today stands out
    assert re.search(r'data-count="0" data-level="0"', svg)
    assert re.search(r'data-count="2" data-level="4"', svg)


def test_calendar_refuses_a_week_that_does_not_start_on_monday():
    with pytest.raises(ValueError):
        calendar_heatmap_svg(
            [date(2025, 2, 25)],
            [1],
            title="t",
            desc="d",
            weekday_labels=[""] * 7,
            month_labels=[""] * 12,
            cell_titles=["x"],
        )


def test_columns_are_as_tall_as_their_values():
    svg = str(
        column_chart_svg(
            [4, 2, 0],
            ["a", "b", "c"],
            title="Due",
            sublabels=["x", "y", "z"],
            highlight=0,
        )
    )
    heights = [
        float(h) for h in re.findall(r'class="column"[^>]*height="([\d.]+)"', svg)
    ]
    assert heights[0] == 2 * heights[1] and heights[2] == 0
    assert "<desc>a x: 4; b y: 2; c z: 0</desc>" in svg
    assert svg.count('fill="#b3261e"') == 1


def test_labelled_bars_put_each_label_above_its_bar():
    svg = str(
        labelled_bars_svg([0.5, 1.0], ["Row-wise softmax", "Masking"], title="Recall")
    )
    widths = [float(w) for w in re.findall(r'class="bar"[^>]*width="([\d.]+)"', svg)]
    assert widths[1] == 2 * widths[0]
    assert "<desc>Row-wise softmax: 50%; Masking: 100%</desc>" in svg


def test_recall_is_shown_a_week_ahead_not_now(client, app, learner):
    """Minutes after a first right answer, recall now is about 100 %: do the
    progress and self-assessment pages show the prediction 7 days ahead (and
    say so), while the API keeps the raw value under recall_now?"""
    item = graded_item("scores")
    record(app, learner, item, True, timedelta(minutes=2))
    measured = client.get("/api/v1/self-assessments").json["skills"]
    scores = next(s for s in measured if s["skill_id"] == "scores")["measured"]
    assert scores["recall_now"] > 0.99
    assert scores["mean_retrievability"] == scores["recall_now"]
    assert 0 < scores["recall_in_7_days"] < 0.9
    shown = f"{round(scores['recall_in_7_days'] * 100)}%"
    progress = client.get("/api/v1/progress").json["skills"]
    same = next(s for s in progress if s["skill_id"] == "scores")
    assert same["recall_in_7_days"] == scores["recall_in_7_days"]
    assert same["recall_now"] == scores["recall_now"]

    html = client.get("/progress?lang=zh-CN").get_data(as_text=True)
    assert 'id="recall-horizon"' in html and "7 天" in html
    row = re.search(r'<tr data-skill="scores">.*?</tr>', html, re.S).group(0)
    cells = re.findall(r"<td>([^<]*)</td>", row)
    assert cells[1] == shown, cells  # not 100 %, though recall now is
    assert "当前记忆" not in html
    english = client.get("/progress?lang=en").get_data(as_text=True)
    assert "Recall in 7 days" in english and "Recall now" not in english

    assess = client.get("/assess?lang=en").get_data(as_text=True)
    assert f"predicted recall in 7 days: {shown}" in assess
    assert "recall now" not in assess
