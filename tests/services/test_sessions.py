"""Sessions end on the server; passwords are not guessable; usernames ignore case."""

from __future__ import annotations

import logging

import pytest
from sqlalchemy import text

from quizsvc.db import downgrade, get_session, upgrade
from quizsvc.models import username_key
from quizsvc.services import InvalidInput
from quizsvc.services.accounts import check_password_rules, register
from tests.factories import PASSWORD, csrf_token, in_chinese, make_learner, sign_in

NEW_PASSWORD = "violet kettle umbrella"


@pytest.fixture
def app(db_app):
    return db_app


def two_devices(app):
    """Two clients signed in as a new learner "ana" (a phone and a laptop)."""
    make_learner(app, "ana")
    phone, laptop = app.test_client(), app.test_client()
    sign_in(phone, "ana")
    sign_in(laptop, "ana")
    return phone, laptop


def copy_cookie(source, target) -> None:
    """Give `target` the session cookie `source` holds (a stolen copy)."""
    cookie = source.get_cookie("session")
    target.set_cookie("session", cookie.value)


def test_a_cookie_copied_before_logout_is_dead_after_it(app):
    """Does logging out end the session for every copy of the cookie?"""
    make_learner(app, "ana")
    browser, thief = app.test_client(), app.test_client()
    sign_in(browser, "ana")
    copy_cookie(browser, thief)
    assert thief.get("/api/v1/settings").status_code == 200
    assert thief.get("/today").status_code == 200
    assert browser.post("/api/v1/auth/logout").status_code == 200
    assert thief.get("/api/v1/settings").status_code == 401
    assert thief.get("/today").status_code == 302


def test_logging_out_of_the_pages_ends_the_session_too(app):
    make_learner(app, "ana")
    browser, thief = app.test_client(), app.test_client()
    sign_in(browser, "ana")
    copy_cookie(browser, thief)
    page = browser.get("/today").get_data(as_text=True)
    assert (
        browser.post("/logout", data={"csrf_token": csrf_token(page)}).status_code
        == 302
    )
    assert thief.get("/progress").status_code == 302
    assert thief.get("/api/v1/progress").status_code == 401


def test_logging_out_leaves_other_devices_signed_in(app):
    phone, laptop = two_devices(app)
    phone.post("/api/v1/auth/logout")
    assert laptop.get("/api/v1/settings").status_code == 200


def test_changing_the_password_ends_every_other_session(app):
    phone, laptop = two_devices(app)
    token = laptop.post("/api/v1/tokens", json={"name": "script"}).json["token"]
    response = laptop.post(
        "/api/v1/auth/password",
        json={"current_password": PASSWORD, "new_password": NEW_PASSWORD},
    )
    assert response.status_code == 200
    assert response.json["other_sessions_ended"] == 1
    assert laptop.get("/api/v1/settings").status_code == 200
    assert phone.get("/api/v1/settings").status_code == 401
    bearer = {"Authorization": f"Bearer {token}"}
    assert app.test_client().get("/api/v1/settings", headers=bearer).status_code == 200
    old = app.test_client().post(
        "/api/v1/auth/login", json={"username": "ana", "password": PASSWORD}
    )
    assert old.status_code == 401
    fresh = app.test_client().post(
        "/api/v1/auth/login", json={"username": "ana", "password": NEW_PASSWORD}
    )
    assert fresh.status_code == 200


def test_changing_the_password_can_revoke_the_tokens(app):
    make_learner(app, "ana")
    client = app.test_client()
    sign_in(client, "ana")
    token = client.post("/api/v1/tokens", json={"name": "script"}).json["token"]
    page = client.get("/settings?lang=en").get_data(as_text=True)
    assert "Also revoke all my API tokens" in page
    response = client.post(
        "/settings/password",
        data={
            "csrf_token": csrf_token(page),
            "current_password": PASSWORD,
            "new_password": NEW_PASSWORD,
            "confirm": NEW_PASSWORD,
            "revoke_tokens": "1",
        },
    )
    assert response.status_code == 302
    bearer = {"Authorization": f"Bearer {token}"}
    assert app.test_client().get("/api/v1/settings", headers=bearer).status_code == 401
    assert client.get("/settings").status_code == 200


@pytest.mark.parametrize(
    ("current", "new", "fragment"),
    [
        ("wrong password!", NEW_PASSWORD, "current password is wrong"),
        (PASSWORD, "12345678", "too easy to guess"),
    ],
)
def test_a_refused_password_change_changes_nothing(app, current, new, fragment):
    client, other = two_devices(app)
    page = client.get("/settings?lang=en").get_data(as_text=True)
    response = client.post(
        "/settings/password",
        data={
            "csrf_token": csrf_token(page),
            "current_password": current,
            "new_password": new,
            "confirm": new,
        },
    )
    assert response.status_code == 400
    assert fragment in response.get_data(as_text=True)
    assert other.get("/api/v1/settings").status_code == 200


def test_sign_out_everywhere_is_in_settings(app):
    phone, laptop = two_devices(app)
    page = laptop.get("/settings").get_data(as_text=True)
    assert 'id="sign-out-everywhere"' in page
    response = laptop.post(
        "/settings/sign-out-everywhere", data={"csrf_token": csrf_token(page)}
    )
    assert response.status_code == 302 and "/login" in response.location
    assert phone.get("/api/v1/settings").status_code == 401
    assert laptop.get("/api/v1/settings").status_code == 401


def test_sign_out_everywhere_over_the_api(app):
    phone, laptop = two_devices(app)
    response = laptop.post("/api/v1/auth/logout-everywhere")
    assert response.json == {"signed_out": True, "sessions_ended": 2}
    assert phone.get("/api/v1/settings").status_code == 401


# --- passwords ----------------------------------------------------------------


@pytest.mark.parametrize(
    "password", ["12345678", "password", " " * 8, "qwertyuiop", "anaana123"]
)
def test_common_and_trivial_passwords_are_refused(password):
    with pytest.raises(InvalidInput) as refused:
        check_password_rules(password, "anaana")
    assert "too easy to guess" in str(refused.value)
    assert "太容易被猜到" in in_chinese(refused.value)


@pytest.mark.parametrize(
    "password", [PASSWORD, NEW_PASSWORD, "tr0ub4dor&3", "夜空中最亮的星星"]
)
def test_good_passwords_pass(password):
    check_password_rules(password, "ana")


def test_registration_refuses_a_weak_password_in_both_languages(app):
    for lang, words in (("en", "too easy to guess"), ("zh-CN", "太容易被猜到")):
        response = app.test_client().post(
            f"/api/v1/auth/register?lang={lang}",
            json={"username": "mei", "password": "password"},
        )
        assert response.status_code == 400
        assert response.json["error"] == "weak_password"
        assert words in response.json["message"]


# --- usernames ----------------------------------------------------------------


def test_usernames_are_one_account_whatever_the_case(app):
    make_learner(app, "Xiaoming")
    client = app.test_client()
    for spelling in ("xiaoming", "XIAOMING", "ｘｉａｏｍｉｎｇ"):
        response = client.post(
            "/api/v1/auth/register", json={"username": spelling, "password": PASSWORD}
        )
        assert response.status_code == 409, spelling
        login = client.post(
            "/api/v1/auth/login", json={"username": spelling, "password": PASSWORD}
        )
        assert login.status_code == 200, spelling
        assert login.json["user"]["username"] == "Xiaoming"


def test_the_key_is_nfkc_and_case_folded():
    assert username_key("ADMIN") == username_key("admin") == username_key("ａｄｍｉｎ")
    assert username_key("Straße") == username_key("STRASSE")


def _insert_user(connection, user_id: int, username: str) -> None:
    connection.execute(
        text(
            "INSERT INTO users (id, username, role, locale, timezone, created_at) "
            "VALUES (:id, :name, 'learner', 'zh-CN', 'UTC', CURRENT_TIMESTAMP)"
        ),
        {"id": user_id, "name": username},
    )


def test_migration_0005_reports_colliding_usernames(db_engine, caplog, capsys):
    """Does adding the case-insensitive key report old collisions, merging none?"""
    downgrade(db_engine, "0004")
    with db_engine.begin() as connection:
        for user_id, name in ((1, "admin"), (2, "Admin"), (3, "ADMIN"), (4, "li")):
            _insert_user(connection, user_id, name)
    with caplog.at_level(logging.WARNING, logger="quizsvc.migrations"):
        upgrade(db_engine)
    report = caplog.text + capsys.readouterr().err
    assert "2 username(s)" in report
    assert "'Admin' (id 2) matches 'admin' (id 1)" in report
    assert "'ADMIN' (id 3) matches 'admin' (id 1)" in report
    with db_engine.connect() as connection:
        rows = connection.execute(
            text("SELECT id, username, username_key FROM users ORDER BY id")
        ).all()
    assert [tuple(row) for row in rows] == [
        (1, "admin", "admin"),
        (2, "Admin", None),
        (3, "ADMIN", None),
        (4, "li", "li"),
    ]


def test_after_a_collision_each_account_signs_in_by_its_exact_spelling(db_engine):
    from sqlalchemy.orm import Session

    from quizsvc.services.users import find_user

    downgrade(db_engine, "0004")
    with db_engine.begin() as connection:
        _insert_user(connection, 1, "admin")
        _insert_user(connection, 2, "Admin")
    upgrade(db_engine)
    with Session(db_engine) as session:
        assert find_user(session, "Admin").id == 2
        assert find_user(session, "admin").id == 1
        assert find_user(session, "ADMIN").id == 1


def test_registering_through_the_service_sets_the_key(app):
    with app.app_context():
        session = get_session()
        user = register(session, "Mei", PASSWORD)
        assert user.username == "Mei" and user.username_key == "mei"
