"""Getting back into an account (issue 20 part 6): `quizsvc users set-password`,
a teacher's one-time reset codes, the 忘记密码 page and POST /api/v1/auth/reset."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select

from quizsvc.cli import main
from quizsvc.db import get_session
from quizsvc.models import ApiToken, ResetCode, UserSession
from quizsvc.services.accounts import authenticate
from quizsvc.services.reset_codes import (
    RESET_CODE_ALPHABET,
    BadResetCode,
    issue_reset_code,
)
from quizsvc.services.users import find_user
from tests.factories import (
    PASSWORD,
    csrf_token,
    in_chinese,
    make_learner,
    make_teacher,
    sign_in,
)

NEW_PASSWORD = "violet tram umbrella"


@pytest.fixture
def app(db_app):
    return db_app


@pytest.fixture
def teacher(app):
    make_teacher(app)
    client = app.test_client()
    sign_in(client, "wang")
    return client


@pytest.fixture
def classroom(teacher, app):
    """A class taught by wang that ana joined; returns (class id, ana's id, code)."""
    made = teacher.post("/api/v1/classes", json={"name": "深度学习 (1) 班"}).json
    ana = make_learner(app, "ana")
    client = app.test_client()
    sign_in(client, "ana")
    joined = client.post("/api/v1/classes/join", json={"code": made["join_code"]})
    assert joined.status_code == 201, joined.json
    return made["id"], ana, made["join_code"]


def _live(app, username: str) -> tuple[int, int]:
    """The account's live sessions and API tokens."""
    with app.app_context():
        session = get_session()
        user = find_user(session, username)
        sessions = session.scalars(
            select(UserSession).where(
                UserSession.user_id == user.id, UserSession.ended_at.is_(None)
            )
        ).all()
        tokens = session.scalars(
            select(ApiToken).where(
                ApiToken.user_id == user.id, ApiToken.revoked_at.is_(None)
            )
        ).all()
        return len(sessions), len(tokens)


def _signs_in(app, username: str, password: str) -> bool:
    with app.app_context():
        return authenticate(get_session(), username, password) is not None


# --- quizsvc users set-password --------------------------------------------------


def test_set_password_from_stdin_ends_every_session_and_token(app):
    """Does the admin's new password work, the old one not, and is everyone
    who held the account signed out, tokens revoked?"""
    make_learner(app, "ana")
    client = app.test_client()
    sign_in(client, "ana")
    assert client.post("/api/v1/tokens", json={"name": "script"}).status_code == 201
    assert _live(app, "ana") == (1, 1)
    result = app.test_cli_runner().invoke(
        main,
        ["users", "set-password", "ANA", "--password-stdin"],
        input="a long secret\n",
    )
    assert result.exit_code == 0, result.output
    assert "ended 1 session(s) and revoked 1 API token(s)" in result.output
    assert _signs_in(app, "ana", "a long secret")
    assert not _signs_in(app, "ana", PASSWORD)
    assert _live(app, "ana") == (0, 0)
    assert client.get("/api/v1/tokens").status_code == 401


@pytest.mark.parametrize(
    ("args", "stdin", "message"),
    [
        (["ana", "--password-stdin"], "short\n", "at least 8"),
        (["ana", "--password-stdin"], "password1\n", "too easy to guess"),
        (["nobody", "--password-stdin"], "a long secret\n", "no account 'nobody'"),
    ],
)
def test_set_password_refuses_bad_input_with_exit_2(app, args, stdin, message):
    """Same strength rule as registering; nothing changes on a refusal."""
    make_learner(app, "ana")
    result = app.test_cli_runner().invoke(
        main, ["users", "set-password", *args], input=stdin
    )
    assert result.exit_code == 2 and message in result.output, result.output
    assert "Traceback" not in result.output
    assert _signs_in(app, "ana", PASSWORD)


# --- a teacher issues a code ----------------------------------------------------


def test_a_teacher_issues_a_24_hour_code_for_a_learner_of_their_class(
    app, teacher, classroom
):
    class_id, ana, _code = classroom
    before = datetime.now(UTC)
    response = teacher.post(f"/api/v1/classes/{class_id}/learners/{ana}/reset-code")
    assert response.status_code == 201, response.json
    body = response.json
    assert body["username"] == "ana" and body["user_id"] == ana
    letters = body["code"].replace("-", "")
    assert len(letters) == 12 and set(letters) <= set(RESET_CODE_ALPHABET)
    expires = datetime.fromisoformat(body["expires_at"])
    assert expires.utcoffset() is not None
    assert (
        timedelta(hours=23, minutes=59)
        < expires - before
        <= timedelta(hours=24, minutes=1)
    )
    with app.app_context():
        # Only a hash is stored.
        stored = get_session().scalars(select(ResetCode.code_hash)).all()
        assert len(stored) == 1 and body["code"] not in stored[0]


def test_codes_only_for_members_of_a_class_the_caller_teaches(app, teacher, classroom):
    class_id, ana, _code = classroom
    outsider = make_learner(app, "bo")
    # Someone not in the class, a class id that does not exist: 404.
    url = f"/api/v1/classes/{class_id}/learners/{outsider}/reset-code"
    assert teacher.post(url).status_code == 404
    assert (
        teacher.post(f"/api/v1/classes/999/learners/{ana}/reset-code").status_code
        == 404
    )
    # Another teacher who does not teach this class, and the learner herself.
    make_teacher(app, "zhao")
    other = app.test_client()
    sign_in(other, "zhao")
    own = f"/api/v1/classes/{class_id}/learners/{ana}/reset-code"
    assert other.post(own).status_code == 404
    learner = app.test_client()
    sign_in(learner, "ana")
    assert learner.post(own).status_code == 404
    assert app.test_client().post(own).status_code == 401
    with app.app_context():
        assert get_session().scalars(select(ResetCode)).all() == []


def test_teachers_and_admins_in_a_class_get_no_code_from_a_teacher(
    app, teacher, classroom
):
    """A teacher must not take over a colleague's account through a class."""
    class_id, ana, _code = classroom
    with app.app_context():
        session = get_session()
        find_user(session, "ana").role = "teacher"
        session.commit()
    response = teacher.post(
        f"/api/v1/classes/{class_id}/learners/{ana}/reset-code?lang=en"
    )
    assert response.status_code == 400 and "set-password" in response.json["message"]


# --- the learner uses it --------------------------------------------------------


def _issue(teacher, classroom) -> str:
    class_id, ana, _code = classroom
    return teacher.post(f"/api/v1/classes/{class_id}/learners/{ana}/reset-code").json[
        "code"
    ]


def _reset(client, code: str, username: str = "ana", password: str = NEW_PASSWORD):
    return client.post(
        "/api/v1/auth/reset",
        json={"username": username, "code": code, "new_password": password},
    )


def test_a_code_resets_the_password_once_and_signs_out_everywhere(
    app, teacher, classroom
):
    code = _issue(teacher, classroom)
    holder = app.test_client()
    sign_in(holder, "ana")
    holder.post("/api/v1/tokens", json={"name": "script"})
    client = app.test_client()
    # Typed in lower case with spaces: still the code.
    response = _reset(client, code.lower().replace("-", " "))
    assert response.status_code == 200, response.json
    assert response.json["password_changed"] is True
    assert _signs_in(app, "ana", NEW_PASSWORD)
    assert not _signs_in(app, "ana", PASSWORD)
    assert _live(app, "ana") == (0, 0)
    assert holder.get("/api/v1/tokens").status_code == 401
    again = _reset(client, code, password="another fine phrase")
    assert again.status_code == 400 and again.json["error"] == "invalid_reset_code"
    assert _signs_in(app, "ana", NEW_PASSWORD)


def test_wrong_used_expired_and_unknown_look_the_same(app, teacher, classroom):
    """A wrong code, an expired one, a replaced one and an unknown username get
    one and the same answer, in zh and en: nothing tells a username exists."""
    class_id, ana, _code = classroom
    first = _issue(teacher, classroom)
    second = _issue(teacher, classroom)  # replaces the first
    with app.app_context():
        session = get_session()
        expired = issue_reset_code(
            session,
            find_user(session, "wang"),
            class_id,
            ana,
            now=datetime.now(UTC) - timedelta(hours=25),
        ).code
        session.commit()
    client = app.test_client()
    bodies = [
        _reset(client, first),
        _reset(client, expired),
        _reset(client, "ABCD-EFGH-JKMN"),
        _reset(client, second, username="nobody"),
    ]
    assert {r.status_code for r in bodies} == {400}
    assert len({(r.json["error"], r.json["message"]) for r in bodies}) == 1
    assert bodies[0].json["message"] == in_chinese(BadResetCode())
    english = client.post(
        "/api/v1/auth/reset?lang=en",
        json={"username": "nobody", "code": "X", "new_password": NEW_PASSWORD},
    )
    assert "wrong, already used or expired" in english.json["message"]
    assert _signs_in(app, "ana", PASSWORD)


def test_a_weak_password_keeps_the_code_for_another_try(app, teacher, classroom):
    code = _issue(teacher, classroom)
    client = app.test_client()
    weak = _reset(client, code, password="password1")
    assert weak.status_code == 400 and weak.json["error"] == "weak_password"
    assert _reset(client, code).status_code == 200


def test_wrong_codes_count_against_a_rate_limit(app, teacher, classroom):
    """Ten wrong codes a minute from one address; the eleventh is 429, and a
    weak-password retry with a right code does not count."""
    code = _issue(teacher, classroom)
    client = app.test_client()
    for _ in range(3):
        assert _reset(client, code, password="password1").status_code == 400
    statuses = [_reset(client, f"WRONG-{i:04d}").status_code for i in range(11)]
    assert statuses == [400] * 10 + [429]
    limited = _reset(client, code)
    assert limited.status_code == 429 and limited.json["error"] == "too_many_requests"


def test_bad_reset_bodies_are_clear_400s(app):
    client = app.test_client()
    missing = client.post("/api/v1/auth/reset", json={"username": "ana"})
    assert missing.status_code == 400 and missing.json["error"] == "missing_field"
    typed = client.post(
        "/api/v1/auth/reset",
        json={"username": "ana", "code": 5, "new_password": NEW_PASSWORD},
    )
    assert typed.status_code == 400


# --- the pages ------------------------------------------------------------------


def test_the_teacher_page_shows_a_code_the_reset_page_accepts(app, teacher, classroom):
    class_id, ana, _code = classroom
    page = teacher.get(f"/teacher/classes/{class_id}/learners/{ana}?lang=zh-CN")
    html = page.get_data(as_text=True)
    assert 'id="issue-reset-code"' in html and 'id="reset-code"' not in html
    issued = teacher.post(
        f"/teacher/classes/{class_id}/learners/{ana}/reset-code",
        data={"csrf_token": csrf_token(html)},
    )
    html = issued.get_data(as_text=True)
    assert issued.status_code == 200 and 'id="reset-code"' in html
    code = html.split('id="reset-code" class="reset-code">')[1].split("<")[0]

    client = app.test_client()
    login = client.get("/login?lang=zh-CN").get_data(as_text=True)
    assert 'id="forgot-password"' in login and "忘记密码" in login
    form = client.get("/reset?lang=zh-CN").get_data(as_text=True)
    wrong = client.post(
        "/reset",
        data={
            "csrf_token": csrf_token(form),
            "username": "ana",
            "code": "ABCD-EFGH-JKMN",
            "password": NEW_PASSWORD,
            "confirm": NEW_PASSWORD,
        },
    )
    assert wrong.status_code == 400
    assert in_chinese(BadResetCode()) in wrong.get_data(as_text=True)
    done = client.post(
        "/reset",
        data={
            "csrf_token": csrf_token(form),
            "username": "ana",
            "code": code,
            "password": NEW_PASSWORD,
            "confirm": NEW_PASSWORD,
        },
    )
    assert done.status_code == 302 and done.location.endswith("/today")
    assert client.get("/today").status_code == 200  # signed in
    assert _signs_in(app, "ana", NEW_PASSWORD)


def test_an_outsider_cannot_issue_a_code_on_the_page(app, teacher, classroom):
    class_id, _ana, _code = classroom
    outsider = make_learner(app, "bo")
    page = teacher.get(f"/teacher/classes/{class_id}").get_data(as_text=True)
    response = teacher.post(
        f"/teacher/classes/{class_id}/learners/{outsider}/reset-code",
        data={"csrf_token": csrf_token(page)},
    )
    assert response.status_code == 404


# --- the join link survives signing up ------------------------------------------


def test_the_join_link_survives_registration(app, teacher, classroom):
    """Logged out, a join link leads to a sign-in page that names the class,
    on to registering, and back to the join form."""
    _class_id, _ana, join_code = classroom
    client = app.test_client()
    first = client.get(f"/join/{join_code}")
    assert first.status_code == 302 and "/login?next=" in first.location
    login = client.get(first.location + "&lang=zh-CN").get_data(as_text=True)
    assert 'id="joining-class"' in login and "深度学习 (1) 班" in login
    register_url = login.split('id="register-link"')[0].rsplit('href="', 1)[1]
    register_url = register_url.split('"')[0].replace("&amp;", "&")
    assert f"next=/join/{join_code}" in register_url
    page = client.get(register_url).get_data(as_text=True)
    assert "深度学习 (1) 班" in page
    made = client.post(
        register_url,
        data={
            "csrf_token": csrf_token(page),
            "username": "李华",
            "password": NEW_PASSWORD,
            "confirm": NEW_PASSWORD,
        },
    )
    assert made.status_code == 302 and made.location.endswith(f"/join/{join_code}")
    joining = client.get(made.location).get_data(as_text=True)
    assert "深度学习 (1) 班" in joining


def test_a_foreign_next_is_not_followed_and_names_no_class(app):
    client = app.test_client()
    page = client.get("/login?next=//evil.example/join/X").get_data(as_text=True)
    assert "evil" not in page and 'id="joining-class"' not in page


# --- usernames in any script ----------------------------------------------------


def test_the_register_form_states_the_username_rule_before_submitting(app):
    html = app.test_client().get("/register?lang=zh-CN").get_data(as_text=True)
    assert 'id="username-hint"' in html and 'aria-describedby="username-hint"' in html
    assert "汉字" in html


@pytest.mark.parametrize("name", ["李华", "王小明2026", "Ана", "さくら", "li.hua_2"])
def test_usernames_may_be_letters_of_any_script(app, name):
    client = app.test_client()
    made = client.post(
        "/api/v1/auth/register", json={"username": name, "password": NEW_PASSWORD}
    )
    assert made.status_code == 201, made.json
    assert made.json["user"]["username"] == name
    again = app.test_client().post(
        "/api/v1/auth/login", json={"username": name, "password": NEW_PASSWORD}
    )
    assert again.status_code == 200


def test_uniqueness_ignores_case_and_width(app):
    client = app.test_client()
    first = client.post(
        "/api/v1/auth/register", json={"username": "Ана", "password": NEW_PASSWORD}
    )
    assert first.status_code == 201
    for taken in ("ана", "АНА"):
        response = app.test_client().post(
            "/api/v1/auth/register", json={"username": taken, "password": NEW_PASSWORD}
        )
        assert response.status_code == 409, taken
    full_width = app.test_client().post(
        "/api/v1/auth/register", json={"username": "ＬＩ华", "password": NEW_PASSWORD}
    )
    assert (
        full_width.status_code == 201 and full_width.json["user"]["username"] == "LI华"
    )


@pytest.mark.parametrize("name", ["李 华", "_li", "li@hua", "李华!", "x" * 65, "·李"])
def test_other_usernames_are_refused_with_the_rule(app, name):
    response = app.test_client().post(
        "/api/v1/auth/register?lang=zh-CN",
        json={"username": name, "password": NEW_PASSWORD},
    )
    assert response.status_code == 400, response.json
    assert "汉字" in response.json["message"]


def test_the_teachers_learner_page_states_the_recall_horizon(app, teacher, classroom):
    """The per-learner skills table shows recall 7 days ahead, not "now"."""
    class_id, ana, _code = classroom
    html = teacher.get(f"/teacher/classes/{class_id}/learners/{ana}?lang=zh-CN")
    text = html.get_data(as_text=True)
    table = text.split('id="skill-table"')[1].split("</thead>")[0]
    assert "7 天后的记忆" in table and "当前记忆" not in table
