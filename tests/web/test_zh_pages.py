"""Every page a learner meets, and every error state, in Chinese: no English
words or internal names outside a short list of mathematical symbols."""

from __future__ import annotations

import dataclasses
import re
from html.parser import HTMLParser

import pytest

from quizsvc import problems
from tests.factories import (
    csrf_token,
    make_learner,
    open_for,
    real_bank,
    sign_in,
    sync_real_bank,
)

# Symbols and names the lesson itself writes in Latin letters (mathematics
# keeps ASCII), and the language switch, which names English in English.
# fmt: off
ALLOWED = {
    # the lesson's symbols
    "Q", "K", "V", "S", "A", "O", "M", "d", "dv", "Tq", "Tk", "T", "q", "k", "v",
    "a", "o", "m", "c", "e", "i", "j", "n", "x", "QK", "QKᵀ", "AV", "Kᵀ",
    "softmax", "exp", "sqrt", "ln", "log", "max", "inf", "argmax", "head_dim",
    "batch", "heads", "query", "key", "keys", "queries", "value", "values",
    "Attention", "Anki", "s", "pi", "key_valid",
    # names of things, written as their makers write them
    "quizsvc", "English", "PyTorch", "FlashAttention", "Flash", "Transformer",
    "NumPy", "GPU", "GPUs", "SRAM", "HBM", "TOML", "JSON", "API", "MATLAB",
    "CSV", "XLSX",
    "is_causal", "scaled_dot_product_attention", "attn_mask", "cu_seqlens",
    "nn", "functional", "torch", "float32", "fp16", "bf16", "dim", "FSRS",
    # code the lesson quotes (in the bank's own Chinese text)
    "Qwen3", "Qwen3Attention", "RMSNorm", "flash_attn_varlen_func", "logits",
    "causal", "True",
    # an API token's header, and time zone names as the learner chose them
    "Authorization", "Bearer", "qz_", "Asia", "Shanghai",
}
# fmt: on


def _bank_words() -> set[str]:
    """Latin-letter words the bank's own Chinese text uses (code it quotes,
    such as is_causal or o_proj): the bank's authors chose them."""
    bank = real_bank()
    texts: list[str] = []

    def collect(value) -> None:
        if isinstance(value, dict):
            if "zh-CN" in value and isinstance(value["zh-CN"], str):
                texts.append(value["zh-CN"])
            for item in value.values():
                collect(item)
        elif isinstance(value, (list, tuple)):
            for item in value:
                collect(item)

    for group in (bank.questions, bank.notes, bank.skills, bank.lessons):
        for entry in group.values():
            collect(dataclasses.asdict(entry))
    return set(WORD.findall(" ".join(texts)))


# Row and column labels such as q0, k1, o2.
LABEL = re.compile(r"^[a-zA-Z]\d+$")
# Internal names that once showed on Chinese pages (the allowed words above may
# not hide them).
INTERNAL = ("causal = True", "tau1", "S_shifted", "A_shifted", "undefin ")
WORD = re.compile(r"[A-Za-z][A-Za-z0-9_]*")


class _Text(HTMLParser):
    """The text a reader sees: text nodes and the values shown in form fields."""

    def __init__(self):
        super().__init__()
        self.parts: list[str] = []
        self.skip = 0
        self.foreign = 0

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        if tag in ("script", "style", "code", "kbd", "svg", "math", "textarea"):
            self.skip += 1
        if attributes.get("lang") == "en":
            self.foreign += 1
        for name in ("placeholder", "aria-label", "alt"):
            if attributes.get(name):
                self.parts.append(attributes[name])
        if tag == "input" and attributes.get("type") in ("submit", "button"):
            self.parts.append(attributes.get("value") or "")

    def handle_endtag(self, tag):
        if tag in ("script", "style", "code", "kbd", "svg", "math", "textarea"):
            self.skip = max(self.skip - 1, 0)

    def handle_data(self, data):
        if not self.skip and not self.foreign:
            self.parts.append(data)
        self.foreign = 0 if self.foreign and data.strip() else self.foreign


def english_words(html: str) -> list[str]:
    """The Latin-letter words on a page that are not in the allowed list."""
    reader = _Text()
    reader.feed(html)
    words = set(WORD.findall(" ".join(reader.parts))) - BANK_WORDS
    return sorted(
        {
            w
            for w in words
            if w not in ALLOWED and w.lower() not in ALLOWED and not LABEL.match(w)
        }
    )


BANK_WORDS = _bank_words()


@pytest.fixture
def app(db_app):
    db_app.config["WTF_CSRF_ENABLED"] = False
    db_app.config["LOGIN_RATE_LIMIT"] = "2 per minute"
    sync_real_bank(db_app)
    return db_app


@pytest.fixture
def learner(app):
    return make_learner(app, "lin")


@pytest.fixture
def client(app, learner):
    client = app.test_client()
    sign_in(client, "lin")
    return client


def assert_chinese(response, *statuses):
    html = response.get_data(as_text=True)
    assert response.status_code in (statuses or (200,)), response.status_code
    assert '<html lang="zh-CN">' in html
    assert english_words(html) == [], response.request.path
    reader = _Text()
    reader.feed(html)
    text = " ".join(reader.parts)
    assert not [name for name in INTERNAL if name in text], response.request.path


def test_the_allowlist_reader_finds_english():
    """Does the check notice English text and skip code, symbols and the switch?"""
    html = (
        '<html lang="zh-CN"><p>分数 S 是 the weather</p><code>no_scale</code>'
        '<a lang="en">English</a><input placeholder="type here"></html>'
    )
    assert english_words(html) == ["here", "the", "type", "weather"]


PAGES = [
    "/today",
    "/assess",
    "/progress",
    "/settings",
    "/practice",
    "/explore",
    "/lab",
    "/no-such-page",
]


@pytest.mark.parametrize("path", PAGES)
def test_learner_pages_are_all_chinese(client, path):
    assert_chinese(client.get(path), 200, 404)


def test_sign_in_pages_and_their_errors_are_all_chinese(app):
    app.config["WTF_CSRF_ENABLED"] = True  # the sign-in forms carry their token
    client = app.test_client()
    assert_chinese(client.get("/"))
    login = client.get("/login")
    assert_chinese(login)
    token = csrf_token(login.get_data(as_text=True))
    assert_chinese(client.get("/register"))
    form = {"csrf_token": token, "username": "", "password": "x"}
    assert_chinese(client.post("/register", data=form), 400)
    form = {"csrf_token": token, "username": "x", "password": "wrong password"}
    assert_chinese(client.post("/login", data=form), 400)
    for _ in range(3):
        limited = client.post("/login", data=form)
    assert_chinese(limited, 429)
    assert_chinese(client.post("/login", data={"username": "x" * 400_000}), 413)


@pytest.mark.parametrize("kind", sorted(problems.KINDS))
def test_practice_problems_and_their_verdicts_are_all_chinese(client, kind):
    problem = problems.generate(kind, 5, 2)
    url = f"/practice/{kind}/2/5"
    assert_chinese(client.get(url))
    form = {}
    for ask in problem.ask:
        if ask.format in ("matrix", "boolean_matrix"):
            rows, cols = ask.shape
            for i in range(rows):
                for j in range(cols):
                    form[f"cell-{ask.name}-{i}-{j}"] = "1"
        elif ask.format == "choice":
            form[f"answer-{ask.name}"] = ask.choices[-1].value
        else:
            form[f"answer-{ask.name}"] = "3"
    assert_chinese(client.post(url, data=form), 200, 400)
    # Unreadable entries (a choice can only be one of its options in a form).
    bad = {key: "甲" if not key.startswith("answer-") else "1/0" for key in form}
    bad.update(
        {
            k: v
            for k, v in form.items()
            if any(k == f"answer-{a.name}" for a in problem.ask if a.format == "choice")
        }
    )
    assert_chinese(client.post(url, data=bad), 400)


def _items_of_each_kind():
    questions = real_bank().questions.values()
    chosen = {}
    for question in questions:
        key = question.data["kind"] if question.type == "generated" else question.type
        chosen.setdefault(key, question.id)
    return sorted(chosen.items())


def _wrong(question):
    if question.type == "choice":
        return {
            "answer": next(
                o["id"] for o in question.data["options"] if not o["correct"]
            )
        }
    if question.type == "ordering":
        return {
            f"order-{i}": s["id"]
            for i, s in enumerate(reversed(question.data["steps"]))
        }
    if question.type == "recall":
        return {"rating": "again"}
    if question.type == "generated":
        return {}
    return {"answer": "12345" if question.type == "numeric" else "不是这个"}


@pytest.mark.parametrize(("key", "item_id"), _items_of_each_kind())
def test_drill_items_results_and_notes_are_all_chinese(
    client, app, learner, key, item_id
):
    question = real_bank().questions[item_id]
    extra = {}
    if question.type == "generated":
        extra = {
            "problem_kind": question.data["kind"],
            "problem_seed": 3,
            "problem_level": int(question.data["level"]),
        }
    open_for(app, learner, item_id, **extra)
    assert_chinese(client.get("/drill"))
    assert_chinese(client.get(f"/notes/{question.lesson_note}"), 423)
    assert_chinese(client.get("/lab"), 423)
    form = {"item_id": item_id, **_wrong(question)}
    if question.type == "generated":
        problem = problems.generate(extra["problem_kind"], 3, extra["problem_level"])
        # A format error first (not an attempt), then a wrong answer.
        bad = dict(
            form,
            **{f"answer-{a.name}": "甲" for a in problem.ask if a.format != "choice"},
        )
        bad.update({f"paste-{a.name}": "甲" for a in problem.ask})
        assert_chinese(client.post("/drill/answer", data=bad), 400)
        for ask in problem.ask:
            if ask.format == "matrix":
                form[f"paste-{ask.name}"] = str(
                    [[1] * ask.shape[1] for _ in range(ask.shape[0])]
                )
            elif ask.format == "choice":
                form[f"answer-{ask.name}"] = ask.choices[-1].value
            elif ask.format == "shape":
                form[f"answer-{ask.name}"] = "[2, 3, 4, 5]"
            elif ask.format != "boolean_matrix":
                form[f"answer-{ask.name}"] = "7"
    if question.type == "recall":
        assert_chinese(client.post("/drill/reveal", data={"item_id": item_id}))
    response = client.post("/drill/answer", data=form)
    assert response.status_code == 302, response.get_data(as_text=True)[:3000]
    result = response.location
    assert_chinese(client.get(result))
    assert_chinese(client.post(f"{result}/explain", data={"why": "短"}), 400)
    assert_chinese(client.post(f"{result}/explain", data={"why": "长" * 4001}), 400)
    client.post(f"{result}/explain", data={"why": "我把步骤弄混了"})
    assert_chinese(client.get(result))
    assert_chinese(client.get(f"/notes/{question.lesson_note}"))


def test_ordering_and_self_assessment_errors_are_chinese(client, app, learner):
    question = next(q for q in real_bank().questions.values() if q.type == "ordering")
    open_for(app, learner, question.id)
    first = question.data["steps"][0]["id"]
    twice = {f"order-{i}": first for i in range(len(question.data["steps"]))}
    assert_chinese(
        client.post("/drill/answer", data={"item_id": question.id, **twice}), 400
    )
    skill = next(iter(real_bank().skills))
    assert_chinese(client.post(f"/assess/{skill}", data={"level": "9"}), 400)


def test_the_day_done_page_is_chinese(client, app):
    app.config["WTF_CSRF_ENABLED"] = False
    client.post("/settings", data={"new_per_day": "0", "reviews_per_day": "0"})
    assert_chinese(client.get("/drill"))
