"""Every page and API response carries the security headers."""

from __future__ import annotations

import re

import pytest

from quizsvc.http.headers import CONTENT_SECURITY_POLICY
from tests.factories import fill_placeholders, make_learner, sign_in, sync_real_bank


@pytest.fixture
def app(db_app):
    sync_real_bank(db_app)
    return db_app


def get_paths(app) -> list[str]:
    """Every GET route, with its placeholders filled in."""
    return sorted(
        {
            fill_placeholders(rule.rule)
            for rule in app.url_map.iter_rules()
            if "GET" in rule.methods and rule.endpoint != "static"
        }
    )


def assert_security_headers(response, path: str) -> None:
    headers = response.headers
    policy = headers["Content-Security-Policy"]
    assert (
        "script-src 'self'" in policy
        and "unsafe-inline" not in policy.split("script-src")[1].split(";")[0]
    ), path
    assert "frame-ancestors 'none'" in policy, path
    assert headers["X-Frame-Options"] == "DENY", path
    assert headers["X-Content-Type-Options"] == "nosniff", path
    assert headers["Referrer-Policy"] == "same-origin", path
    assert "Strict-Transport-Security" not in headers, path


@pytest.mark.parametrize("signed", [True, False], ids=["signed-in", "anonymous"])
def test_every_page_sends_the_security_headers(app, signed):
    client = app.test_client()
    if signed:
        make_learner(app, "ana")
        sign_in(client, "ana")
    paths = get_paths(app)
    assert len(paths) >= 20
    for path in paths:
        response = client.get(path)
        assert response.status_code < 500, path
        assert_security_headers(response, path)
        if signed or path.startswith("/api/"):
            assert response.headers["Cache-Control"] == "no-store", path


def test_anonymous_pages_may_be_cached_and_static_files_always(app):
    client = app.test_client()
    assert "no-store" not in client.get("/lab").headers.get("Cache-Control", "")
    make_learner(app, "ana")
    sign_in(client, "ana")
    static = client.get("/static/style.css")
    assert "no-store" not in static.headers.get("Cache-Control", "")
    static.close()


def test_hsts_only_over_https(app):
    client = app.test_client()
    assert (
        "Strict-Transport-Security"
        in client.get("/lab", base_url="https://localhost").headers
    )
    assert "Strict-Transport-Security" not in client.get("/lab").headers


def test_pages_have_no_inline_scripts_or_event_handlers(app):
    """Would the policy block a script the pages need? (None is inline.)"""
    client = app.test_client()
    make_learner(app, "ana")
    sign_in(client, "ana")
    for path in get_paths(app):
        response = client.get(path)
        if response.mimetype != "text/html":
            continue
        html = response.get_data(as_text=True)
        for tag in re.findall(r"<script\b[^>]*>", html):
            assert "src=" in tag or 'type="application/json"' in tag, (path, tag)
        assert not re.search(r"\son[a-z]+\s*=", html), path
        assert "javascript:" not in html, path


def test_the_policy_allows_no_inline_script():
    script_src = next(
        part for part in CONTENT_SECURITY_POLICY.split("; ") if "script-src" in part
    )
    assert script_src == "script-src 'self'"
