"""Accounts: register, sign in, sign out, cookies, CSRF and the login rate limit."""

from __future__ import annotations

import pytest

from tests.factories import PASSWORD, csrf_token, make_learner, sync_real_bank


@pytest.fixture
def app(db_app):
    sync_real_bank(db_app)
    return db_app


def post_form(client, path: str, **fields):
    """Open the form's page (in English), then post it with its CSRF token."""
    page_path = path.split("?")[0] + "?lang=en"
    token = csrf_token(client.get(page_path).get_data(as_text=True))
    return client.post(path, data={"csrf_token": token, **fields})


def test_register_signs_in_and_lands_on_today(app):
    client = app.test_client()
    response = post_form(
        client, "/register", username="mei", password=PASSWORD, confirm=PASSWORD
    )
    assert response.status_code == 302 and response.location.endswith("/today")
    assert client.get("/today").status_code == 200


@pytest.mark.parametrize(
    ("fields", "fragment"),
    [
        ({"username": "mei", "password": "short", "confirm": "short"}, "8"),
        ({"username": "mei", "password": PASSWORD, "confirm": "different!!"}, "differ"),
        (
            {"username": "bad name!", "password": PASSWORD, "confirm": PASSWORD},
            "letters (of any script",
        ),
        ({"username": "", "password": PASSWORD, "confirm": PASSWORD}, "required"),
    ],
)
def test_register_reports_bad_fields(app, fields, fragment):
    response = post_form(app.test_client(), "/register", **fields)
    assert response.status_code == 400
    assert fragment in response.get_data(as_text=True)


def test_taken_username_is_refused(app):
    make_learner(app, "mei")
    response = post_form(
        app.test_client(),
        "/register",
        username="mei",
        password=PASSWORD,
        confirm=PASSWORD,
    )
    assert response.status_code == 400 and "taken" in response.get_data(as_text=True)


def test_form_post_without_csrf_token_is_refused(app):
    """Can another site post a login form on a learner's behalf?"""
    make_learner(app, "mei")
    client = app.test_client()
    response = client.post("/login", data={"username": "mei", "password": PASSWORD})
    # Refused in the page's language, not with Flask-WTF's English words.
    assert response.status_code == 400
    assert "表单已过期" in response.get_data(as_text=True)
    assert client.get("/today").status_code == 302  # not signed in


def test_login_logout_and_next(app):
    make_learner(app, "mei")
    client = app.test_client()
    response = post_form(
        client, "/login?next=/progress", username="mei", password=PASSWORD
    )
    assert response.status_code == 302 and response.location.endswith("/progress")
    today = client.get("/today").get_data(as_text=True)
    out = client.post("/logout", data={"csrf_token": csrf_token(today)})
    assert out.status_code == 302
    assert client.get("/today").status_code == 302


def test_login_never_redirects_off_site(app):
    make_learner(app, "mei")
    response = post_form(
        app.test_client(),
        "/login?next=//evil.example/x",
        username="mei",
        password=PASSWORD,
    )
    assert response.location.endswith("/today")


def test_wrong_password_is_a_400_without_saying_which_part(app):
    make_learner(app, "mei")
    client = app.test_client()
    for username in ("mei", "nobody"):
        response = post_form(client, "/login", username=username, password="nope-nope")
        assert response.status_code == 400
        assert "Wrong username or password" in response.get_data(as_text=True)


def test_login_attempts_are_rate_limited(app):
    app.config["LOGIN_RATE_LIMIT"] = "3 per minute"
    client = app.test_client()
    statuses = [
        client.post(
            "/api/v1/auth/login", json={"username": "x", "password": "yyyyyyyy"}
        ).status_code
        for _ in range(4)
    ]
    assert statuses == [401, 401, 401, 429]
    limited = client.post("/api/v1/auth/login", json={"username": "x", "password": "y"})
    assert limited.json["error"] == "too_many_requests"


def test_session_cookie_is_httponly_lax_and_secure_over_https(app):
    make_learner(app, "mei")
    plain = app.test_client().post(
        "/api/v1/auth/login", json={"username": "mei", "password": PASSWORD}
    )
    cookie = plain.headers["Set-Cookie"]
    assert "HttpOnly" in cookie and "SameSite=Lax" in cookie and "Secure" not in cookie
    secure = app.test_client().post(
        "/api/v1/auth/login",
        base_url="https://localhost",
        json={"username": "mei", "password": PASSWORD},
    )
    assert "Secure" in secure.headers["Set-Cookie"]


def test_password_is_stored_hashed(app):
    from quizsvc.db import get_session
    from quizsvc.services.users import find_user

    make_learner(app, "mei")
    with app.app_context():
        stored = find_user(get_session(), "mei").password_hash
    assert PASSWORD not in stored and stored.startswith(("scrypt:", "pbkdf2:"))


@pytest.mark.skipif(
    "not __import__('os').environ.get('QUIZSVC_TEST_REDIS_URL')",
    reason="QUIZSVC_TEST_REDIS_URL is not set; .ci/run sets it when Redis answers",
)
def test_rate_limit_counters_can_live_in_redis(database_url):
    """Can several servers share the login counters through Redis?"""
    import os
    import uuid

    from quizsvc import create_app
    from quizsvc.db import get_engine

    config = {
        "TESTING": True,
        "SECRET_KEY": "x",
        "DATABASE_URL": database_url,
        "RATELIMIT_STORAGE_URI": os.environ["QUIZSVC_TEST_REDIS_URL"],
        "LOGIN_RATE_LIMIT": "2 per minute",
    }
    first, second = create_app(config), create_app(config)
    # Counters are kept per client address: a fresh one keeps runs apart.
    client_address = {"REMOTE_ADDR": f"test-client-{uuid.uuid4().hex}"}
    statuses = [
        app.test_client()
        .post(
            "/api/v1/auth/login",
            environ_base=client_address,
            json={"username": f"x-{client_address['REMOTE_ADDR']}", "password": "y"},
        )
        .status_code
        for app in (first, second, first)
    ]
    for app in (first, second):
        get_engine(app).dispose()
    assert statuses == [401, 401, 429]
