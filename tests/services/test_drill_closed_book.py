"""The closed-book rule, end to end: nothing says the right answer before the
learner has explained a wrong one, and nothing computes it while the item is open."""

from __future__ import annotations

import json

import pytest

from quizsvc import problems
from tests.factories import csrf_token, open_for, real_bank, sync_real_bank

GENERATED = "l16-hand-generated-small"

# One wrong answer per item type, and what would give the right answer away:
# keys no redacted verdict may carry, and texts no response may contain.
FORBIDDEN_KEYS = {
    "expected",
    "answer",
    "explanation",
    "why_wrong",
    "model_answer",
    "key_points",
    "misconception",
    "misconceptions",
    "misconception_step",
    "feedback",
    "matched",
    "error",
    "missed",
    "wrong",
    "first_wrong",
    "note_id",
}


def _choice(multiple: bool) -> tuple[str, list[str]]:
    question = next(
        q
        for q in real_bank().questions.values()
        if q.type == "choice" and q.data["multiple"] == multiple
    )
    right = [o["id"] for o in question.data["options"] if o["correct"]]
    wrong = [o["id"] for o in question.data["options"] if not o["correct"]]
    # A multiple choice with one right and one wrong pick: saying which pick is
    # wrong would say which one is right.
    answer = [right[0], wrong[0]] if multiple else wrong[0]
    return question.id, answer


def _first(kind: str) -> str:
    return next(q.id for q in real_bank().questions.values() if q.type == kind)


def _long_cloze() -> str:
    """A cloze item whose answers are long enough to look for in a page."""
    return next(
        q.id
        for q in real_bank().questions.values()
        if q.type == "cloze" and all(len(a) >= 4 for a in q.data["accepted"])
    )


def _generated_wrong() -> dict:
    problem = problems.generate("attention", 11, 1)
    answers = {ask.name: problem.answer_json(ask.name) for ask in problem.ask}
    answers["S"] = problem.pipelines["no_scale"]["S"].tolist()
    return answers


def _cases():
    single, single_answer = _choice(False)
    multiple, multiple_answer = _choice(True)
    order = [s["id"] for s in real_bank().questions[_first("ordering")].data["steps"]]
    return [
        ("choice", single, {"answer": single_answer}),
        ("choice-multiple", multiple, {"answer": multiple_answer}),
        ("numeric", _first("numeric"), {"answer": "12345"}),
        ("cloze", _long_cloze(), {"answer": "surely not this"}),
        ("ordering", _first("ordering"), {"answer": list(reversed(order))}),
        ("recall", _first("recall"), {"rating": "again"}),
        ("generated", GENERATED, {"answer": _generated_wrong()}),
    ]


CASES = _cases()


@pytest.fixture
def app(db_app):
    sync_real_bank(db_app)
    return db_app


def _open(app, learner, item_id):
    extra = {}
    if item_id == GENERATED:
        extra = {"problem_kind": "attention", "problem_seed": 11, "problem_level": 1}
    open_for(app, learner, item_id, **extra)


def _keys(value) -> set[str]:
    if isinstance(value, dict):
        return set(value) | {k for v in value.values() for k in _keys(v)}
    if isinstance(value, list):
        return {k for v in value for k in _keys(v)}
    return set()


def _giveaways(item_id: str, given) -> list[str]:
    """Texts that would tell the right answer of an item (beyond what was given)."""
    question = real_bank().questions[item_id]
    data = question.data
    if question.type == "choice":
        return [
            o["text"][lang]
            for o in data["options"]
            if o["correct"] and o["id"] not in given
            for lang in ("zh-CN", "en")
        ]
    if question.type == "numeric":
        return [f"{data['answer']:.3f}", str(data["answer"])]
    if question.type == "cloze":
        return list(data["accepted"])
    if question.type == "recall":
        return [data["model_answer"]["zh-CN"], data["model_answer"]["en"]]
    if question.type == "ordering":
        return [" → ".join(s["id"] for s in data["steps"])]
    problem = problems.generate("attention", 11, 1)
    return ["0.7071", "0.6698"] if "S" in problem.answer else []


@pytest.mark.parametrize(
    ("label", "item_id", "payload"), CASES, ids=[c[0] for c in CASES]
)
def test_a_wrong_answer_says_nothing_of_the_right_one_until_explained(
    learner_client, app, learner, label, item_id, payload
):
    """Over the API and on the result page, for every item type: is the right
    answer, the explanation and the note kept back until the learner wrote why,
    and does a retry with the same key get the very same body?"""
    _open(app, learner, item_id)
    request = {"item_id": item_id, "idempotency_key": f"k-{label}", **payload}
    first = learner_client.post("/api/v1/drill/answer", json=request)
    assert first.status_code == 201, first.json
    body = first.json
    assert body["correct"] is False and body["requires_explanation"] is True
    leaked = _keys(body) & FORBIDDEN_KEYS
    assert not leaked, leaked
    assert not isinstance(body["verdict"].get("correct"), list)
    dumped = json.dumps(body, ensure_ascii=False)
    for giveaway in _giveaways(item_id, payload.get("answer")):
        assert giveaway not in dumped, giveaway

    replay = learner_client.post("/api/v1/drill/answer", json=request)
    assert replay.status_code == 200 and replay.json["replayed"] is True
    assert {**replay.json, "replayed": False} == body

    page = learner_client.get(f"/drill/result/{body['review_id']}?lang=en")
    html = page.get_data(as_text=True)
    assert page.status_code == 200 and 'id="why-form"' in html
    assert 'id="note-link"' not in html and "The correct answer" not in html
    for giveaway in _giveaways(item_id, payload.get("answer")):
        assert giveaway not in html, giveaway

    explained = learner_client.post(
        "/api/v1/drill/explanation",
        json={"review_id": body["review_id"], "text": "I mixed up the steps here"},
    )
    assert explained.status_code == 201 and explained.json["note_id"]
    after = learner_client.post("/api/v1/drill/answer", json=request).json
    assert after["requires_explanation"] is False and "explanation" in after
    kind = real_bank().questions[item_id].type
    if kind == "generated":
        assert after["verdict"]["misconception"] == "no_scale"
    elif kind != "recall":
        assert "detail" in after["verdict"]
        # Before the explanation the learner still sees what they gave.
        own = {
            key: value
            for key, value in after["verdict"]["detail"].items()
            if key in ("chosen", "order", "value", "normalized")
        }
        assert own, after["verdict"]["detail"]
        assert {key: body["verdict"].get(key) for key in own} == own


@pytest.mark.parametrize(
    ("label", "item_id", "payload"), CASES, ids=[c[0] for c in CASES]
)
def test_a_replay_of_a_right_answer_is_the_first_body(
    learner_client, app, learner, label, item_id, payload
):
    """Does a retried right answer come back whole, per-step detail included?"""
    question = real_bank().questions[item_id]
    if question.type == "generated":
        problem = problems.generate("attention", 11, 1)
        answer = {"answer": {a.name: problem.answer_json(a.name) for a in problem.ask}}
    elif question.type == "recall":
        answer = {"rating": "good"}
    elif question.type == "choice":
        answer = {"answer": [o["id"] for o in question.data["options"] if o["correct"]]}
    elif question.type == "numeric":
        answer = {"answer": str(question.data["answer"])}
    elif question.type == "cloze":
        answer = {"answer": question.data["accepted"][0]}
    else:
        answer = {"answer": [s["id"] for s in question.data["steps"]]}
    _open(app, learner, item_id)
    request = {"item_id": item_id, "idempotency_key": f"r-{label}", **answer}
    first = learner_client.post("/api/v1/drill/answer", json=request)
    assert first.status_code == 201 and first.json["correct"] is True, first.json
    replay = learner_client.post("/api/v1/drill/answer", json=request)
    assert {**replay.json, "replayed": False} == first.json
    if question.type == "generated":
        assert replay.json["verdict"]["steps"]


def test_notes_need_a_signed_in_learner(app):
    """Is a note closed to anonymous requests (401 in the API, sign-in page in HTML)?"""
    client = app.test_client()
    api = client.get("/api/v1/notes/l16-qkv-roles")
    assert api.status_code == 401 and api.json["error"] == "unauthorized"
    page = client.get("/notes/l16-qkv-roles")
    assert page.status_code == 302 and "/login" in page.location


def _check(client, problem_id: str, answers: dict):
    return client.post(
        f"/api/v1/problems/{problem_id}/check", json={"answers": answers}
    )


def test_nothing_computes_an_open_items_answer_until_it_is_explained(
    learner_client, app, learner
):
    """While a generated item is open (and after a wrong answer, until it is
    explained), are its note, the Lab, Explore and the checker of the same
    problem closed to the learner, and open again afterwards?"""
    _open(app, learner, GENERATED)
    problem = problems.generate("attention", 11, 1)
    right = {a.name: problem.answer_json(a.name) for a in problem.ask}
    note = real_bank().questions[GENERATED].lesson_note

    def closed() -> None:
        lab = learner_client.get("/lab")
        assert lab.status_code == 423 and 'id="finish-first"' in lab.get_data(
            as_text=True
        )
        assert learner_client.get("/explore").status_code == 423
        check = _check(learner_client, "attention:1:11", right)
        assert check.status_code == 423 and check.json["error"] == "closed_book"
        assert "expected" not in check.json
        assert learner_client.get("/practice/attention/1/11").status_code == 423
        token = csrf_token(
            learner_client.get("/practice/attention/1/12").get_data(as_text=True)
        )
        posted = learner_client.post(
            "/practice/attention/1/11", data={"csrf_token": token}
        )
        assert posted.status_code == 423
        assert learner_client.get(f"/api/v1/notes/{note}").status_code == 423
        assert learner_client.get(f"/notes/{note}").status_code == 423

    closed()
    # Another problem of the same kind is no help and stays open.
    assert _check(learner_client, "attention:1:12", {"S": "[[0, 0]]"}).status_code in (
        200,
        400,
    )
    answered = learner_client.post(
        "/api/v1/drill/answer",
        json={"item_id": GENERATED, "answer": _generated_wrong()},
    )
    assert answered.status_code == 201 and answered.json["requires_explanation"]
    closed()
    learner_client.post(
        "/api/v1/drill/explanation",
        json={"review_id": answered.json["review_id"], "text": "forgot the 1/sqrt d"},
    )
    assert learner_client.get("/lab").status_code == 200
    assert learner_client.get("/explore").status_code == 200
    assert _check(learner_client, "attention:1:11", right).status_code == 200
    assert learner_client.get(f"/api/v1/notes/{note}").status_code == 200


def test_the_drill_item_does_not_carry_the_problems_seed(learner_client, app, learner):
    """Without its seed a drill problem cannot be named to the public checker."""
    _open(app, learner, GENERATED)
    item = learner_client.get("/api/v1/drill/next").json
    assert item["problem"]["given"] and "seed" not in item["problem"]


def _note_statuses(client) -> dict[str, tuple[int, int]]:
    """Every note of the bank: (page status, API status)."""
    return {
        note: (
            client.get(f"/notes/{note}").status_code,
            client.get(f"/api/v1/notes/{note}").status_code,
        )
        for note in real_bank().notes
    }


def test_every_note_is_closed_while_any_item_is_open(learner_client, app, learner):
    """With an item open (whose secondary skills' notes hold its answer), does
    every lesson note answer 423 on the page and over the API, with the same
    explanation in zh and en, and do they open once the item is answered right?"""
    item = "l16-scaling-qwen3-rmsnorm"
    question = real_bank().questions[item]
    assert len(real_bank().notes) > 1
    _open(app, learner, item)
    statuses = _note_statuses(learner_client)
    assert set(statuses.values()) == {(423, 423)}, statuses
    other = next(n for n in real_bank().notes if n != question.lesson_note)
    zh = learner_client.get(f"/api/v1/notes/{other}?lang=zh-CN")
    assert zh.json["error"] == "closed_book"
    assert zh.json["message"] == (
        "这道题还在作答时，笔记保持关闭；答错后先写下原因，笔记才会打开。"
    )
    en = learner_client.get(f"/api/v1/notes/{other}?lang=en")
    assert en.json["message"].startswith("This note stays closed while its question")
    page = learner_client.get(f"/notes/{other}?lang=en").get_data(as_text=True)
    assert "This note stays closed while its question is open in your drill." in page
    page = learner_client.get(f"/notes/{other}?lang=zh-CN").get_data(as_text=True)
    assert "对应的笔记暂时关闭" in page

    right = [o["id"] for o in question.data["options"] if o["correct"]]
    # `next: false`: no next item is opened with the answer (one would close
    # the notes again, as it should).
    answered = learner_client.post(
        "/api/v1/drill/answer", json={"item_id": item, "answer": right, "next": False}
    )
    assert answered.status_code == 201 and answered.json["correct"] is True
    assert set(_note_statuses(learner_client).values()) == {(200, 200)}


def test_every_note_stays_closed_until_a_wrong_answer_is_explained(
    learner_client, app, learner
):
    """After a wrong answer, are all notes closed until the learner wrote why,
    and all open afterwards?"""
    item, wrong = _choice(False)
    _open(app, learner, item)
    answered = learner_client.post(
        "/api/v1/drill/answer", json={"item_id": item, "answer": wrong}
    )
    assert answered.json["requires_explanation"] is True
    assert set(_note_statuses(learner_client).values()) == {(423, 423)}
    learner_client.post(
        "/api/v1/drill/explanation",
        json={"review_id": answered.json["review_id"], "text": "picked the keys"},
    )
    assert set(_note_statuses(learner_client).values()) == {(200, 200)}
