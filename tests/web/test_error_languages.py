"""Every error a learner, a teacher or an API client can provoke, in both languages.

Each case below provokes one error on the API or on a page, once with
`?lang=zh-CN` and once with `?lang=en`. A zh-CN answer must carry its message
in Chinese (CJK characters, and no English sentence left in it); an en answer
must carry it in English (no Chinese). On the API the message is the JSON
error's `message`; on a page it is the text of every alert the page shows.
"""

from __future__ import annotations

import io
import itertools
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from html.parser import HTMLParser

import pytest
from flask import Flask
from sqlalchemy import select

from quizsvc.app import create_app
from quizsvc.db import get_engine, get_session
from quizsvc.models import Classroom, Review, User
from quizsvc.services.accounts import hash_password
from quizsvc.services.classes import create_class, join_class, set_joining_open
from quizsvc.services.users import create_user
from tests.factories import (
    PASSWORD,
    csrf_token,
    generated_question,
    make_learner,
    open_for,
    real_bank,
    sign_in,
    sync_real_bank,
)

CJK = re.compile("[\u3400-\u9fff\uff00-\uffef\u3000-\u303f]")
# Four words in a row, each followed by a space: an English sentence. Names
# that stay as they are in both languages (`duration_ms`, `Content-Type:
# application/json`, `quizsvc questions sync`) never make four.
ENGLISH_SENTENCE = re.compile(r"(?:\b[A-Za-z]+[,.;:]?\s+){3}[A-Za-z]+")
CHOICE = "l16-hand-diagnose"
ORDERING = "l16-hand-order-of-steps"
RECALL = "l16-hand-recite-example"
CLOZE = "l16-impl-causal-flag"
NOTE = "l16-worked-example"


class _Alerts(HTMLParser):
    """The text of every element a page marks role="alert"."""

    def __init__(self):
        super().__init__()
        self.depth = 0
        self.texts: list[str] = []

    def handle_starttag(self, tag, attrs):
        if self.depth:
            self.depth += 1
        elif ("role", "alert") in attrs:
            self.depth = 1
            self.texts.append("")

    def handle_endtag(self, tag):
        if self.depth:
            self.depth -= 1

    def handle_data(self, data):
        if self.depth:
            self.texts[-1] += data


def alerts_of(html: str) -> list[str]:
    """The alert texts on a page, whitespace collapsed."""
    parser = _Alerts()
    parser.feed(html)
    return [" ".join(text.split()) for text in parser.texts if text.strip()]


@dataclass
class World:
    """The app every case runs against, and ways to make clients for it."""

    app: Flask
    # The same database behind an app that checks forms' CSRF tokens.
    form_app: Flask
    names: itertools.count

    def anonymous(self):
        return self.app.test_client()

    def learner(self, prefix: str = "ana"):
        """A new learner, signed in (a client of their own)."""
        name = f"{prefix}{next(self.names)}"
        make_learner(self.app, name)
        client = self.app.test_client()
        sign_in(client, name)
        client.user_id = self._id(name)
        return client

    def teacher(self):
        """A new teacher with a class of their own, signed in."""
        name = f"wang{next(self.names)}"
        with self.app.app_context():
            session = get_session()
            user = create_user(
                session, name, role="teacher", password_hash=hash_password(PASSWORD)
            )
            classroom = create_class(session, user, "一班")
            session.commit()
            class_id, code, user_id = classroom.id, classroom.join_code, user.id
        client = self.app.test_client()
        sign_in(client, name)
        client.class_id, client.join_code, client.user_id = class_id, code, user_id
        client.username = name
        return client

    def _id(self, name: str) -> int:
        with self.app.app_context():
            return get_session().scalar(select(User.id).where(User.username == name))

    def run(self, work: Callable) -> object:
        """Run `work(session)` in the app and commit."""
        with self.app.app_context():
            session = get_session()
            result = work(session)
            session.commit()
            return result

    def wrong_review(self, client) -> int:
        """Give the learner a wrong answer to an open choice item; its review id."""
        open_for(self.app, client.user_id, CHOICE)
        answered = client.post(
            "/api/v1/drill/answer", json={"item_id": CHOICE, "answer": "a"}
        )
        assert answered.status_code == 201 and not answered.json["correct"]
        return self.run(
            lambda session: session.scalar(
                select(Review.id).where(Review.user_id == client.user_id)
            )
        )


@pytest.fixture(scope="module")
def world(tmp_path_factory, _sqlite_template):
    """One app with the real bank, shared by the cases (each makes its own people)."""
    path = tmp_path_factory.mktemp("errors") / "quizsvc.sqlite3"
    shutil.copyfile(_sqlite_template, path)
    app = create_app(
        {
            "TESTING": True,
            "SECRET_KEY": "test-secret",
            "DATABASE_URL": f"sqlite:///{path}",
            "WTF_CSRF_ENABLED": False,
            "LOGIN_RATE_LIMIT": "1000 per minute",
            "REGISTER_RATE_LIMIT": "1000 per minute",
            "JOIN_RATE_LIMIT": "1000 per minute",
        }
    )
    sync_real_bank(app)
    form_app = create_app(
        {
            "TESTING": True,
            "SECRET_KEY": "test-secret",
            "DATABASE_URL": f"sqlite:///{path}",
            "REGISTER_RATE_LIMIT": "1000 per minute",
        }
    )
    yield World(app, form_app, itertools.count(1))
    get_engine(app).dispose()
    get_engine(form_app).dispose()


def with_lang(path: str, lang: str) -> str:
    return f"{path}{'&' if '?' in path else '?'}lang={lang}"


# --- the cases: name → (what to do, the status and code it answers) ------------
# Each case takes the world and a language and returns the response. API cases
# are checked by their JSON; page cases by their alerts.


def api(method: str, path: str, who: str = "learner", **kwargs):
    def case(world: World, lang: str):
        client = world.anonymous() if who == "anonymous" else world.learner()
        return client.open(with_lang(path, lang), method=method, **kwargs)

    return case


def _generated_open(world: World, client) -> str:
    question = generated_question()
    open_for(
        world.app,
        client.user_id,
        question.id,
        problem_kind=question.data["kind"],
        problem_seed=3,
        problem_level=int(question.data["level"]),
    )
    return question.id


def answer_generated_badly(world, lang):
    client = world.learner()
    item = _generated_open(world, client)
    return client.post(
        with_lang("/api/v1/drill/answer", lang),
        json={"item_id": item, "answer": {"S": "[[1, oops]]"}},
    )


def answer_generated_not_by_name(world, lang):
    client = world.learner()
    item = _generated_open(world, client)
    return client.post(
        with_lang("/api/v1/drill/answer", lang), json={"item_id": item, "answer": "1"}
    )


def answer_empty(world, lang):
    client = world.learner()
    open_for(world.app, client.user_id, CHOICE)
    return client.post(
        with_lang("/api/v1/drill/answer", lang), json={"item_id": CHOICE}
    )


def answer_ordering_with_a_step_twice(world, lang):
    client = world.learner()
    open_for(world.app, client.user_id, ORDERING)
    steps = [s["id"] for s in real_bank().questions[ORDERING].data["steps"]]
    return client.post(
        with_lang("/api/v1/drill/answer", lang),
        json={"item_id": ORDERING, "answer": [steps[0], *steps[:-1]]},
    )


def answer_recall_with_a_bad_rating(world, lang):
    client = world.learner()
    open_for(world.app, client.user_id, RECALL)
    return client.post(
        with_lang("/api/v1/drill/answer", lang),
        json={"item_id": RECALL, "rating": "great"},
    )


def answer_with_a_long_key(world, lang):
    client = world.learner()
    open_for(world.app, client.user_id, CHOICE)
    return client.post(
        with_lang("/api/v1/drill/answer", lang),
        json={"item_id": CHOICE, "answer": "a", "idempotency_key": "k" * 200},
    )


def answer_too_long(world, lang):
    client = world.learner()
    open_for(world.app, client.user_id, CLOZE)
    return client.post(
        with_lang("/api/v1/drill/answer", lang),
        json={"item_id": CLOZE, "answer": "a" * 20_000},
    )


def answer_another_item(world, lang):
    client = world.learner()
    open_for(world.app, client.user_id, RECALL)
    return client.post(
        with_lang("/api/v1/drill/answer", lang),
        json={"item_id": CHOICE, "answer": "a"},
    )


def reveal_a_choice_item(world, lang):
    client = world.learner()
    open_for(world.app, client.user_id, CHOICE)
    return client.post(
        with_lang("/api/v1/drill/reveal", lang), json={"item_id": CHOICE}
    )


def next_before_explaining(world, lang):
    client = world.learner()
    world.wrong_review(client)
    return client.get(with_lang("/api/v1/drill/next", lang))


def explain_too_briefly(world, lang):
    client = world.learner()
    review = world.wrong_review(client)
    return client.post(
        with_lang("/api/v1/drill/explanation", lang),
        json={"review_id": review, "text": "eh"},
    )


def explain_someone_elses(world, lang):
    review = world.wrong_review(world.learner())
    return world.learner().post(
        with_lang("/api/v1/drill/explanation", lang),
        json={"review_id": review, "text": "because I forgot"},
    )


def read_a_closed_note(world, lang):
    client = world.learner()
    open_for(world.app, client.user_id, CHOICE)
    return client.get(with_lang(f"/api/v1/notes/{NOTE}", lang))


def check_a_problem_open_in_a_drill(world, lang):
    client = world.learner()
    _generated_open(world, client)
    question = generated_question()
    ident = f"{question.data['kind']}:{question.data['level']}:3"
    return client.post(
        with_lang(f"/api/v1/problems/{ident}/check", lang),
        json={"answers": {"S": "[[1]]"}},
    )


def register_twice(world, lang):
    name = f"mei{next(world.names)}"
    make_learner(world.app, name)
    return world.anonymous().post(
        with_lang("/api/v1/auth/register", lang),
        json={"username": name, "password": PASSWORD},
    )


def bearer(token: str):
    return {"Authorization": f"Bearer {token}"}


def with_a_revoked_token(world, lang):
    client = world.learner()
    issued = client.post("/api/v1/tokens", json={"name": "x"}).json
    client.delete(f"/api/v1/tokens/{issued['id']}")
    return world.anonymous().get(
        with_lang("/api/v1/progress", lang), headers=bearer(issued["token"])
    )


def revoke_an_unknown_token(world, lang):
    return world.learner().delete(with_lang("/api/v1/tokens/999999", lang))


def change_password_wrongly(world, lang):
    return world.learner().post(
        with_lang("/api/v1/auth/password", lang),
        json={"current_password": "not it", "new_password": PASSWORD + "!"},
    )


def change_to_a_weak_password(world, lang):
    return world.learner().post(
        with_lang("/api/v1/auth/password", lang),
        json={"current_password": PASSWORD, "new_password": "password"},
    )


def create_a_class_as_a_learner(world, lang):
    return world.learner().post(
        with_lang("/api/v1/classes", lang), json={"name": "一班"}
    )


def create_a_class_in_no_time_zone(world, lang):
    return world.teacher().post(
        with_lang("/api/v1/classes", lang),
        json={"name": "二班", "timezone": "Mars/Base"},
    )


def create_a_class_with_a_long_name(world, lang):
    return world.teacher().post(
        with_lang("/api/v1/classes", lang), json={"name": "x" * 500}
    )


def join_a_closed_class(world, lang):
    teacher = world.teacher()
    world.run(
        lambda session: set_joining_open(
            session, session.get(Classroom, teacher.class_id), False
        )
    )
    return world.learner().post(
        with_lang("/api/v1/classes/join", lang), json={"code": teacher.join_code}
    )


def join_twice(world, lang):
    teacher = world.teacher()
    learner = world.learner()
    world.run(
        lambda session: join_class(
            session, session.get(User, learner.user_id), teacher.join_code
        )
    )
    return learner.post(
        with_lang("/api/v1/classes/join", lang), json={"code": teacher.join_code}
    )


def join_with_a_taken_student_number(world, lang):
    teacher = world.teacher()
    first = world.learner()
    world.run(
        lambda session: join_class(
            session,
            session.get(User, first.user_id),
            teacher.join_code,
            student_number="007",
        )
    )
    return world.learner().post(
        with_lang("/api/v1/classes/join", lang),
        json={"code": teacher.join_code, "student_number": "007"},
    )


def read_a_class_not_taught(world, lang):
    return world.teacher().get(
        with_lang(f"/api/v1/classes/{world.teacher().class_id}/learners", lang)
    )


def export_in_an_unknown_format(world, lang):
    return world.learner().get(with_lang("/api/v1/me/export?format=xml", lang))


def export_an_unknown_kind(world, lang):
    teacher = world.teacher()
    return teacher.get(
        with_lang(f"/api/v1/classes/{teacher.class_id}/exports/grades", lang)
    )


def rate_an_unknown_skill(world, lang):
    return world.learner().post(
        with_lang("/api/v1/self-assessments", lang),
        json={"skill_id": "nonsense", "level": 1},
    )


def rate_with_a_long_note(world, lang):
    return world.learner().post(
        with_lang("/api/v1/self-assessments", lang),
        json={"skill_id": "scores", "level": 1, "note": "x" * 5000},
    )


def raw(path: str, body: bytes, method: str = "POST"):
    def case(world: World, lang: str):
        return world.learner().open(
            with_lang(path, lang),
            method=method,
            data=body,
            content_type="application/json",
        )

    return case


API_CASES = {
    "415 a body that is not JSON": (
        api("POST", "/api/v1/auth/login", "anonymous", data="username=x"),
        415,
        "unsupported_media_type",
    ),
    "400 JSON that does not parse": (
        raw("/api/v1/drill/answer", b"{not json"),
        400,
        "malformed_json",
    ),
    "400 JSON that is not an object": (
        api("POST", "/api/v1/drill/answer", json=["a"]),
        400,
        "malformed_json",
    ),
    "400 a missing field": (
        api("POST", "/api/v1/auth/login", "anonymous", json={"username": "x"}),
        400,
        "missing_field",
    ),
    "400 JSON nested too deep": (raw("/api/v1/drill/answer", b"[" * 50), 400, None),
    "400 a NUL character": (
        raw("/api/v1/drill/answer", b'{"item_id": "a\\u0000"}'),
        400,
        "invalid_input",
    ),
    "400 a lone surrogate": (
        raw("/api/v1/drill/answer", b'{"item_id": "\\ud800"}'),
        400,
        "invalid_input",
    ),
    "400 a number too large": (
        raw("/api/v1/drill/explanation", b'{"review_id": 1e999}'),
        400,
        "invalid_input",
    ),
    "400 an integer beyond 64 bits": (
        raw("/api/v1/drill/explanation", b'{"review_id": 99999999999999999999}'),
        400,
        "invalid_input",
    ),
    "400 NaN": (raw("/api/v1/drill/answer", b'{"x": NaN}'), 400, "invalid_input"),
    "400 a body that is not UTF-8": (
        raw("/api/v1/drill/answer", b'{"item_id": "\xff"}'),
        400,
        "malformed_json",
    ),
    "400 strings expected": (
        api(
            "POST",
            "/api/v1/auth/login",
            "anonymous",
            json={"username": 5, "password": "x"},
        ),
        400,
        "invalid_input",
    ),
    "400 registering with a role": (
        api(
            "POST",
            "/api/v1/auth/register",
            "anonymous",
            json={"username": "zed", "password": PASSWORD, "role": "admin"},
        ),
        400,
        "invalid_input",
    ),
    "400 registering in another locale": (
        api(
            "POST",
            "/api/v1/auth/register",
            "anonymous",
            json={"username": "zed", "password": PASSWORD, "locale": "fr"},
        ),
        400,
        "invalid_input",
    ),
    "400 a weak password": (
        api(
            "POST",
            "/api/v1/auth/register",
            "anonymous",
            json={"username": "zed", "password": "password"},
        ),
        400,
        "weak_password",
    ),
    "400 a short password": (
        api(
            "POST",
            "/api/v1/auth/register",
            "anonymous",
            json={"username": "zed", "password": "short"},
        ),
        400,
        "invalid_input",
    ),
    "400 a username with spaces": (
        api(
            "POST",
            "/api/v1/auth/register",
            "anonymous",
            json={"username": "a b", "password": PASSWORD},
        ),
        400,
        "invalid_input",
    ),
    "409 a username taken": (register_twice, 409, "conflict"),
    "401 wrong password": (
        api(
            "POST",
            "/api/v1/auth/login",
            "anonymous",
            json={"username": "nobody", "password": PASSWORD},
        ),
        401,
        "invalid_credentials",
    ),
    "401 not signed in": (
        api("GET", "/api/v1/progress", "anonymous"),
        401,
        "unauthorized",
    ),
    "401 a revoked token": (with_a_revoked_token, 401, "invalid_token"),
    "404 an unknown note": (api("GET", "/api/v1/notes/nope"), 404, "not_found"),
    "423 a note closed by the drill": (read_a_closed_note, 423, "closed_book"),
    "409 answering with nothing open": (
        api("POST", "/api/v1/drill/answer", json={"item_id": CHOICE, "answer": "a"}),
        409,
        "conflict",
    ),
    "409 answering another item": (answer_another_item, 409, "conflict"),
    "400 a rating that is not text": (
        api("POST", "/api/v1/drill/answer", json={"item_id": CHOICE, "rating": 3}),
        400,
        "invalid_input",
    ),
    "400 a duration beyond a day": (
        api(
            "POST",
            "/api/v1/drill/answer",
            json={"item_id": CHOICE, "duration_ms": 10**12},
        ),
        400,
        "invalid_input",
    ),
    "400 an idempotency key too long": (answer_with_a_long_key, 400, "invalid_input"),
    "400 an answer too long": (answer_too_long, 400, "invalid_input"),
    "400 no answer": (answer_empty, 400, "format_error"),
    "400 a matrix that cannot be read": (answer_generated_badly, 400, "format_error"),
    "400 a generated answer not by name": (
        answer_generated_not_by_name,
        400,
        "invalid_input",
    ),
    "400 an ordering with a step twice": (
        answer_ordering_with_a_step_twice,
        400,
        "format_error",
    ),
    "400 a recall rating that is no button": (
        answer_recall_with_a_bad_rating,
        400,
        "invalid_input",
    ),
    "400 revealing a choice item": (reveal_a_choice_item, 400, "invalid_input"),
    "409 the next item before explaining": (
        next_before_explaining,
        409,
        "explanation_required",
    ),
    "400 an explanation too short": (explain_too_briefly, 400, "invalid_input"),
    "404 someone else's answer": (explain_someone_elses, 404, "not_found"),
    "400 a review id out of range": (
        api(
            "POST",
            "/api/v1/drill/explanation",
            json={"review_id": 0, "text": "because"},
        ),
        400,
        "invalid_input",
    ),
    "400 an unknown problem kind": (
        api("POST", "/api/v1/problems", "anonymous", json={"kind": "nonsense"}),
        400,
        "invalid_input",
    ),
    "400 a seed out of range": (
        api(
            "POST",
            "/api/v1/problems",
            "anonymous",
            json={"kind": "scores", "seed": -1},
        ),
        400,
        "invalid_input",
    ),
    "404 an unknown problem": (
        api("POST", "/api/v1/problems/nonsense:1:1/check", "anonymous", json={}),
        404,
        "not_found",
    ),
    "400 answers that are not an object": (
        api(
            "POST",
            "/api/v1/problems/scores:1:1/check",
            "anonymous",
            json={"answers": [1]},
        ),
        400,
        "invalid_input",
    ),
    "400 a practice answer that cannot be read": (
        api(
            "POST",
            "/api/v1/problems/lesson_example:1:0/check",
            "anonymous",
            json={"answers": {"S": "[0.7, oops]"}},
        ),
        400,
        "format_error",
    ),
    "423 a problem open in a drill": (
        check_a_problem_open_in_a_drill,
        423,
        "closed_book",
    ),
    "400 an unknown setting": (
        api("PATCH", "/api/v1/settings", json={"colour": "red"}),
        400,
        "invalid_input",
    ),
    "400 a setting out of range": (
        api("PATCH", "/api/v1/settings", json={"desired_retention": 2}),
        400,
        "invalid_input",
    ),
    "400 a time zone that does not exist": (
        api("PATCH", "/api/v1/settings", json={"timezone": "Mars/Base"}),
        400,
        "invalid_input",
    ),
    "400 a token with no name": (
        api("POST", "/api/v1/tokens", json={"name": "  "}),
        400,
        "invalid_input",
    ),
    "404 an unknown token": (revoke_an_unknown_token, 404, "not_found"),
    "400 the current password wrong": (change_password_wrongly, 400, "invalid_input"),
    "400 a weak new password": (change_to_a_weak_password, 400, "weak_password"),
    "400 an unknown skill rated": (rate_an_unknown_skill, 404, "not_found"),
    "400 a self-rating out of range": (
        api("POST", "/api/v1/self-assessments", json={"skill_id": "s", "level": 9}),
        400,
        "invalid_input",
    ),
    "400 a note too long": (rate_with_a_long_note, 400, "invalid_input"),
    "403 a learner creating a class": (create_a_class_as_a_learner, 403, "forbidden"),
    "400 a class in no time zone": (
        create_a_class_in_no_time_zone,
        400,
        "invalid_input",
    ),
    "400 a class name too long": (
        create_a_class_with_a_long_name,
        400,
        "invalid_input",
    ),
    "400 an unknown class field": (
        lambda world, lang: world.teacher().post(
            with_lang("/api/v1/classes", lang), json={"name": "a", "colour": "red"}
        ),
        400,
        "invalid_input",
    ),
    "404 an unknown join code": (
        api("POST", "/api/v1/classes/join", json={"code": "ZZZZZZZZ"}),
        404,
        "not_found",
    ),
    "409 a class closed to new learners": (join_a_closed_class, 409, "conflict"),
    "409 joining twice": (join_twice, 409, "conflict"),
    "409 a student number taken": (
        join_with_a_taken_student_number,
        409,
        "conflict",
    ),
    "404 leaving a class not joined": (
        api("DELETE", "/api/v1/classes/1/membership"),
        404,
        "not_found",
    ),
    "404 a class not taught": (read_a_class_not_taught, 404, "not_found"),
    "400 an export format unknown": (
        export_in_an_unknown_format,
        400,
        "invalid_input",
    ),
    "400 an export kind unknown": (export_an_unknown_kind, 400, "invalid_input"),
    "404 an id beyond the database's range": (
        api("DELETE", f"/api/v1/tokens/{2**40}"),
        404,
        "not_found",
    ),
    "404 an unknown API address": (api("GET", "/api/v1/nowhere"), 404, "not_found"),
    "405 a method the address does not take": (
        api("GET", "/api/v1/auth/login", "anonymous"),
        405,
        "method_not_allowed",
    ),
    "413 a body too large": (
        api(
            "POST",
            "/api/v1/drill/answer",
            data=b"x" * (300 * 1024),
            content_type="application/json",
        ),
        413,
        None,
    ),
}


# --- pages ---------------------------------------------------------------------


def page(method: str, path: str, who: str = "learner", **kwargs):
    def case(world: World, lang: str):
        client = world.anonymous() if who == "anonymous" else world.learner()
        return client.open(with_lang(path, lang), method=method, **kwargs)

    return case


def page_answer_unreadable(world, lang):
    client = world.learner()
    item = _generated_open(world, client)
    return client.post(
        with_lang("/drill/answer", lang),
        data={"item_id": item, "paste-S": "[[1, oops]]"},
    )


def page_answer_empty(world, lang):
    client = world.learner()
    open_for(world.app, client.user_id, CHOICE)
    return client.post(with_lang("/drill/answer", lang), data={"item_id": CHOICE})


def page_reveal_a_choice_item(world, lang):
    client = world.learner()
    open_for(world.app, client.user_id, CHOICE)
    return client.post(with_lang("/drill/reveal", lang), data={"item_id": CHOICE})


def page_explain_too_briefly(world, lang):
    client = world.learner()
    review = world.wrong_review(client)
    return client.post(
        with_lang(f"/drill/result/{review}/explain", lang), data={"why": "eh"}
    )


def page_read_a_closed_note(world, lang):
    client = world.learner()
    open_for(world.app, client.user_id, CHOICE)
    return client.get(with_lang(f"/notes/{NOTE}", lang))


def register_on_the_page(world, lang, username: str, password: str):
    client = world.form_app.test_client()
    token = csrf_token(client.get(with_lang("/register", lang)).get_data(as_text=True))
    return client.post(
        with_lang("/register", lang),
        data={
            "csrf_token": token,
            "username": username,
            "password": password,
            "confirm": password,
        },
    )


def page_register_weak(world, lang):
    return register_on_the_page(world, lang, "zed", "password")


def page_register_taken(world, lang):
    name = f"mei{next(world.names)}"
    make_learner(world.app, name)
    return register_on_the_page(world, lang, name, PASSWORD)


def page_join(code: str | None):
    def case(world, lang):
        teacher = world.teacher()
        if code is None:
            world.run(
                lambda session: set_joining_open(
                    session, session.get(Classroom, teacher.class_id), False
                )
            )
        return world.learner().post(
            with_lang("/join", lang), data={"code": code or teacher.join_code}
        )

    return case


def page_teacher(path: str, method: str = "GET", **kwargs):
    def case(world, lang):
        teacher = world.teacher()
        url = path.format(class_id=teacher.class_id, me=teacher.user_id)
        sent = dict(kwargs)
        if "data" in sent:
            sent["data"] = {
                key: value.replace("{me}", teacher.username)
                for key, value in sent["data"].items()
            }
        return teacher.open(with_lang(url, lang), method=method, **sent)

    return case


def page_roster(world, lang):
    teacher = world.teacher()
    return teacher.post(
        with_lang(f"/teacher/classes/{teacher.class_id}/roster", lang),
        data={"roster": (io.BytesIO(b"01,a\n02\n01,b\n"), "r.csv")},
        content_type="multipart/form-data",
    )


def page_csrf_refused(world, lang):
    return world.form_app.test_client().post(
        with_lang("/settings/tokens", lang), data={"name": "x"}
    )


def page_settings_token(world, lang):
    return world.learner().post(with_lang("/settings/tokens", lang), data={"name": ""})


def page_wrong_current_password(world, lang):
    return world.learner().post(
        with_lang("/settings/password", lang),
        data={
            "current_password": "not it",
            "new_password": PASSWORD + "!",
            "confirm": PASSWORD + "!",
        },
    )


PAGE_CASES = {
    "404 a page that does not exist": (page("GET", "/nowhere", "anonymous"), 404),
    "405 a form address opened by GET": (page("GET", "/drill/answer"), 405),
    "413 a form too large": (
        page("POST", "/settings/tokens", data={"name": "x" * (300 * 1024)}),
        413,
    ),
    "400 a form with a NUL character": (
        page("POST", "/settings/tokens", data={"name": "a\x00b"}),
        400,
    ),
    "404 an id beyond the database's range": (
        page("GET", f"/drill/result/{2**40}"),
        404,
    ),
    "404 a practice problem that does not exist": (
        page("GET", "/practice/nonsense/1/1", "anonymous"),
        404,
    ),
    "400 a practice answer that cannot be read": (
        page(
            "POST",
            "/practice/lesson_example/1/0",
            "anonymous",
            data={"paste-S": "[0.7, oops]"},
        ),
        400,
    ),
    "400 a drill answer that cannot be read": (page_answer_unreadable, 400),
    "400 no drill answer": (page_answer_empty, 400),
    "400 revealing a choice item": (page_reveal_a_choice_item, 400),
    "400 an explanation too short": (page_explain_too_briefly, 400),
    "423 a note closed by the drill": (page_read_a_closed_note, 423),
    "400 a weak password on registering": (page_register_weak, 400),
    "400 a username taken on registering": (page_register_taken, 400),
    "400 a form sent without its CSRF token": (page_csrf_refused, 400),
    "404 an unknown join code": (page_join("ZZZZZZZZ"), 404),
    "409 a class closed to new learners": (page_join(None), 409),
    "400 a token with no name": (page_settings_token, 400),
    "400 the current password wrong": (page_wrong_current_password, 400),
    "400 a self-rating note too long": (
        page("POST", "/assess/scores", data={"level": "1", "note": "x" * 5000}),
        400,
    ),
    "403 a learner on the teachers' pages": (page("GET", "/teacher/"), 403),
    "400 a class in no time zone": (
        page_teacher("/teacher/", "POST", data={"name": "二班", "timezone": "X/Y"}),
        400,
    ),
    "400 a period that is not a date": (
        page_teacher("/teacher/classes/{class_id}?from=yesterday"),
        400,
    ),
    "400 a co-teacher who does not exist": (
        page_teacher(
            "/teacher/classes/{class_id}/teachers", "POST", data={"username": "nobody"}
        ),
        400,
    ),
    "404 removing a teacher of another class": (
        page_teacher("/teacher/classes/{class_id}/teachers/1/remove", "POST"),
        404,
    ),
    "409 removing the last teacher": (
        page_teacher("/teacher/classes/{class_id}/teachers/{me}/remove", "POST"),
        409,
    ),
    "404 removing a learner not in the class": (
        page_teacher("/teacher/classes/{class_id}/learners/1/remove", "POST"),
        404,
    ),
    "409 a co-teacher who already teaches": (
        page_teacher(
            "/teacher/classes/{class_id}/teachers", "POST", data={"username": "{me}"}
        ),
        409,
    ),
    "400 a malformed roster": (page_roster, 400),
    "400 a lab matrix that cannot be read": (
        page(
            "POST",
            "/lab",
            "anonymous",
            data={"q": "[[1, x]]", "k": "[[1, 0]]", "v": "[[1, 0]]"},
        ),
        400,
    ),
    "400 a practice kind and level not chosen": (
        page("GET", "/practice?kind=nonsense&level=9", "anonymous"),
        400,
    ),
    "400 a self-rating not chosen": (
        page("POST", "/assess/scores", data={"level": "7"}),
        400,
    ),
    "400 settings out of range": (
        page(
            "POST",
            "/settings",
            data={
                "desired_retention": "2",
                "new_per_day": "-1",
                "reviews_per_day": "x",
                "timezone": "Mars/Base",
                "rollover_hour": "25",
                "language": "fr",
            },
        ),
        400,
    ),
}


def assert_in_language(message: str, lang: str, case: str) -> None:
    assert message.strip(), case
    if lang == "zh-CN":
        assert CJK.search(message), (case, message)
        assert not ENGLISH_SENTENCE.search(message), (case, message)
    else:
        # A language is named in itself ("Choose 中文 or English.").
        assert not CJK.search(message.replace("中文", "")), (case, message)
        assert ENGLISH_SENTENCE.search(message) or re.search("[A-Za-z]{3}", message)


@pytest.mark.parametrize("lang", ["zh-CN", "en"])
@pytest.mark.parametrize("case", sorted(API_CASES))
def test_every_api_error_speaks_the_requests_language(world, case, lang):
    """Is each API error's message Chinese for zh-CN and English for en?"""
    provoke, status, code = API_CASES[case]
    response = provoke(world, lang)
    assert response.status_code == status, (case, response.json)
    assert response.mimetype == "application/json", case
    if code is not None:
        assert response.json["error"] == code, (case, response.json)
    assert_in_language(response.json["message"], lang, case)


@pytest.mark.parametrize("lang", ["zh-CN", "en"])
@pytest.mark.parametrize("case", sorted(PAGE_CASES))
def test_every_page_error_speaks_the_pages_language(world, case, lang):
    """Does each error a page shows read in the page's language, every alert?"""
    provoke, status = PAGE_CASES[case]
    response = provoke(world, lang)
    html = response.get_data(as_text=True)
    assert response.status_code == status, (case, html[:2000])
    assert f'<html lang="{lang}">' in html, case
    alerts = alerts_of(html)
    assert alerts, (case, html[:3000])
    for alert in alerts:
        assert_in_language(alert, lang, case)


def test_an_api_client_gets_errors_in_its_accept_language(world):
    """With no ?lang= and no session, does the Accept-Language header decide?"""
    english = world.anonymous().post(
        "/api/v1/problems", json={}, headers={"Accept-Language": "en-US,en;q=0.8"}
    )
    chinese = world.anonymous().post(
        "/api/v1/problems", json={}, headers={"Accept-Language": "zh-CN"}
    )
    default = world.anonymous().post("/api/v1/problems", json={})
    assert english.json["error"] == chinese.json["error"] == "missing_field"
    assert_in_language(english.json["message"], "en", "header en")
    assert_in_language(chinese.json["message"], "zh-CN", "header zh")
    assert default.json["message"] == chinese.json["message"]


def test_a_signed_in_learners_setting_speaks_before_the_header(world):
    """Does a learner who chose English get English errors from a Chinese browser?"""
    client = world.learner()
    client.patch("/api/v1/settings", json={"language": "en"})
    response = client.post(
        "/api/v1/drill/answer",
        json={"item_id": CHOICE, "answer": "a"},
        headers={"Accept-Language": "zh-CN"},
    )
    assert response.status_code == 409
    assert_in_language(response.json["message"], "en", "setting en")


def test_a_too_many_attempts_answer_speaks_the_language(world):
    """Is a rate-limited login told what to do in its language (never "per")?"""
    app = create_app(
        {
            "TESTING": True,
            "SECRET_KEY": "test-secret",
            "DATABASE_URL": world.app.config["DATABASE_URL"],
            "LOGIN_RATE_LIMIT": "1 per minute",
        }
    )
    try:
        client = app.test_client()
        body = {"username": "nobody", "password": PASSWORD}
        client.post("/api/v1/auth/login", json=body)
        for lang in ("zh-CN", "en"):
            refused = client.post(with_lang("/api/v1/auth/login", lang), json=body)
            assert refused.status_code == 429
            assert_in_language(refused.json["message"], lang, f"429 {lang}")
            assert "per" not in refused.json["message"].split()
    finally:
        get_engine(app).dispose()
