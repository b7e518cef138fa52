"""Learning steps keep their spacing, the day's counter is honest, and a day
of the API drill ends with when to come back (issue 20 parts 2 and 3)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

import quizsvc.services as services_module
from tests.factories import real_bank, sync_real_bank
from tests.services.test_drill_day import _right_answer, _wrong_answer

START = datetime(2026, 12, 2, 1, 0, tzinfo=UTC)  # 09:00 in Asia/Shanghai
THINKING = timedelta(seconds=20)


@pytest.fixture
def app(db_app):
    sync_real_bank(db_app)
    return db_app


class Clock:
    """The services' clock (quizsvc.services.resolve_now), moved by the test."""

    def __init__(self, start: datetime):
        self.now = start

    def install(self, monkeypatch) -> None:
        clock = self

        class Frozen(datetime):
            @classmethod
            def now(cls, tz=None):
                return clock.now if tz is None else clock.now.astimezone(tz)

        monkeypatch.setattr(services_module, "datetime", Frozen)


def _skills(item_id: str) -> frozenset[str]:
    return frozenset(real_bank().questions[item_id].skills)


def _run_day(api, clock: Clock, wrong_every: int = 3) -> tuple[list[dict], dict]:
    """Answer the whole day over the API; every `wrong_every`-th new item wrong
    once. Returns the log of answers and the final drill/next body."""
    log: list[dict] = []
    last_answer: dict[str, dict] = {}
    new_seen = 0
    for _ in range(80):
        step = api.get("/api/v1/drill/next").json
        if step.get("done"):
            if step["day_done"]:
                return log, step
            due = datetime.fromisoformat(step["next_due"])
            assert due.utcoffset() is not None and due > clock.now, step
            log.append({"at": clock.now, "wait_until": due, **step})
            clock.now = due
            continue
        item_id = step["item_id"]
        wrong = False
        if not step["repeat"]:
            new_seen += 1
            wrong = new_seen % wrong_every == 0
        payload = _wrong_answer(step) if wrong else _right_answer(step)
        clock.now += THINKING
        answered = api.post(
            "/api/v1/drill/answer", json={"item_id": item_id, **payload}
        ).json
        entry = {
            "at": clock.now,
            "item_id": item_id,
            "position": step["position"],
            "total": step["total"],
            "repeat": step["repeat"],
            "correct": answered["correct"],
            "card_due": datetime.fromisoformat(answered["next_due"]),
            "previous": last_answer.get(item_id),
        }
        log.append(entry)
        last_answer[item_id] = entry
        if answered["requires_explanation"]:
            clock.now += THINKING
            api.post(
                "/api/v1/drill/explanation",
                json={"review_id": answered["review_id"], "text": "mixed up the axes"},
            )
    raise AssertionError("the day never ended")


def test_a_whole_day_keeps_steps_spaced_and_the_counter_honest(
    learner_client, monkeypatch
):
    """Ten new items, some wrong: is no item asked again before half its step
    (nor straight after itself), no near-duplicate right after its twin, is
    position = answers + 1 <= total, and does the day end with a return time?"""
    clock = Clock(START)
    clock.install(monkeypatch)
    log, final = _run_day(learner_client, clock)
    answers = [e for e in log if "item_id" in e]
    assert sum(not e["repeat"] for e in answers) == 10
    assert any(e["repeat"] for e in answers)
    assert any("wait_until" in e for e in log)  # the day paused for spacing
    for index, entry in enumerate(answers):
        assert entry["position"] == index + 1 <= entry["total"], entry
        previous = entry["previous"]
        if previous is not None:
            step = previous["card_due"] - previous["at"]
            gap = entry["at"] - THINKING - previous["at"]  # presented after
            assert gap >= step / 2, (entry["item_id"], gap, step)
        if index:
            before = answers[index - 1]["item_id"]
            assert entry["item_id"] != before
            assert _skills(entry["item_id"]) != _skills(before), entry["item_id"]
    # "n / n" only at the real end: every total before the last answer is larger.
    assert all(e["total"] > e["position"] for e in answers[:-1])
    assert (
        final["done"] and final["day_done"] and final["reviewed_today"] == len(answers)
    )
    next_due = datetime.fromisoformat(final["next_due"])
    assert next_due.utcoffset() is not None and next_due > clock.now


def test_a_step_not_yet_spaced_makes_the_drill_wait(learner_client, app, monkeypatch):
    """One item answered wrong and nothing else to do: is the next step a wait
    (done, steps waiting, next_due half a step later), and does the page say
    when to come back in the learner's zone, counting down and refreshing?"""
    clock = Clock(START)
    clock.install(monkeypatch)
    api = learner_client
    api.patch("/api/v1/settings", json={"new_per_day": 1})
    first = api.get("/api/v1/drill/next").json
    clock.now += THINKING
    answered = api.post(
        "/api/v1/drill/answer",
        json={"item_id": first["item_id"], **_wrong_answer(first)},
    ).json
    api.post(
        "/api/v1/drill/explanation",
        json={"review_id": answered["review_id"], "text": "picked the wrong axis"},
    )
    card_due = datetime.fromisoformat(answered["next_due"])
    # The result says the day grew by one: the item comes back later today.
    result = api.get(f"/drill/result/{answered['review_id']}?lang=zh-CN")
    shown = result.get_data(as_text=True)
    assert 'id="once-more"' in shown and "+1 再练一次" in shown
    waiting = api.get("/api/v1/drill/next").json
    assert waiting["done"] is True and waiting["day_done"] is False
    assert waiting["steps_waiting"] == 1
    assert first["total"] == 2  # a new item: one answer per learning step
    # Just answered: never straight after itself, so it waits its whole step.
    assert datetime.fromisoformat(waiting["next_due"]) == card_due
    # The page, in the learner's zone (Asia/Shanghai by default).
    monkeypatch.setattr("quizsvc.web.drill.datetime", type(clock.now))
    html = api.get("/drill?lang=zh-CN").get_data(as_text=True)
    local = card_due.astimezone(__import__("zoneinfo").ZoneInfo("Asia/Shanghai"))
    assert local.strftime("%H:%M:%S") in html and "Asia/Shanghai" in html
    assert 'id="countdown"' in html and 'http-equiv="refresh"' in html
    clock.now = card_due
    again = api.get("/api/v1/drill/next").json
    assert again["item_id"] == first["item_id"] and again["repeat"] is True
    # Planned: the first answer, then the 1- and 10-minute steps of the wrong
    # answer (a new item answered right would have needed two answers).
    assert (again["position"], again["total"]) == (2, 3)
    page = api.get("/drill?lang=zh-CN").get_data(as_text=True)
    assert 'id="drill-position">2 / 3<' in page and 'id="drill-repeat"' in page


def _choice_with_options(count: int = 3):
    return next(
        q
        for q in real_bank().questions.values()
        if q.type == "choice"
        and not q.data["multiple"]
        and len(q.data["options"]) >= count
    )


def test_choice_options_are_shuffled_per_presentation():
    """Is each opening's order a permutation of the stable ids, and do the
    orders vary from one presentation to the next?"""
    from quizsvc import item_types

    question = _choice_with_options(4)
    ids = [o["id"] for o in question.data["options"]]
    orders = {
        tuple(item_types.of(question).opening(question)["option_order"])
        for _ in range(60)
    }
    assert all(sorted(order) == sorted(ids) for order in orders)
    assert len(orders) > 1


def test_the_learner_the_replay_and_the_result_see_one_order(
    learner_client, app, learner
):
    """The options come in the stored order over the API and on the page; the
    answer, its replay and the result page keep that order."""
    from quizsvc.db import get_session
    from quizsvc.models import OpenItem
    from tests.factories import open_for

    question = _choice_with_options(3)
    ids = [o["id"] for o in question.data["options"]]
    order = list(reversed(ids))  # surely not the bank's order
    open_for(app, learner, question.id, option_order=order)
    step = learner_client.get("/api/v1/drill/next?lang=en").json
    assert [o["id"] for o in step["options"]] == order
    page = learner_client.get("/drill?lang=en").get_data(as_text=True)
    import re

    shown = re.findall(r'name="answer" value="([^"]+)"', page)
    assert shown == order
    wrong = [o["id"] for o in question.data["options"] if not o["correct"]]
    right = [o["id"] for o in question.data["options"] if o["correct"]]
    request = {"item_id": question.id, "answer": wrong[0], "idempotency_key": "k1"}
    first = learner_client.post("/api/v1/drill/answer", json=request).json
    assert first["option_order"] == order
    replay = learner_client.post("/api/v1/drill/answer", json=request).json
    assert replay["option_order"] == order and replay["replayed"] is True
    learner_client.post(
        "/api/v1/drill/explanation",
        json={"review_id": first["review_id"], "text": "mixed up the roles"},
    )
    result = learner_client.get(f"/drill/result/{first['review_id']}?lang=en")
    assert result.status_code == 200
    assert right and first["correct"] is False
    with app.app_context():
        assert get_session().get(OpenItem, learner) is None


def test_the_result_lists_options_in_the_order_the_learner_saw():
    """Does the result page's list of right options follow the stored order?"""
    from quizsvc import item_types

    question = next(
        q
        for q in real_bank().questions.values()
        if q.type == "choice" and sum(o["correct"] for o in q.data["options"]) >= 2
    )
    right = [o["id"] for o in question.data["options"] if o["correct"]]
    texts = {o["id"]: o["text"]["en"] for o in question.data["options"]}
    kind = item_types.of(question)
    for order in (right, list(reversed(right))):
        others = [o["id"] for o in question.data["options"] if o["id"] not in order]
        verdict = {"correct": False, "option_order": order + others, "detail": {}}
        fields = kind.result_fields(question, verdict, ",".join(order), "en")
        assert fields["expected_text"] == [texts[i] for i in order]
        assert fields["chosen_text"] == [texts[i] for i in order]
