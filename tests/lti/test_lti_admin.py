"""LTI administration in process: the CLI's answers to bad input, the admin page,
the tool's keys, and what never reaches the database or the logs."""

from __future__ import annotations

import logging
import os
import stat

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy import select

from quizsvc.cli import main
from quizsvc.db import get_session
from quizsvc.lti import keys
from quizsvc.lti.launch import class_role, facts, interface_language
from quizsvc.models import Classroom
from quizsvc.models.lti import LtiPlatform
from tests.factories import make_learner, sign_in
from tests.fixtures.lti_platform import SimulatedPlatform

CANVAS = [
    "--issuer",
    "https://canvas.instructure.com",
    "--client-id",
    "10000000000042",
    "--deployment-id",
    "42:8865aa05b4b79b64a91a86042e43af5ea8ae79eb",
    "--auth-login-url",
    "https://sso.canvaslms.com/api/lti/authorize_redirect",
    "--auth-token-url",
    "https://sso.canvaslms.com/login/oauth2/token",
    "--key-set-url",
    "https://sso.canvaslms.com/api/lti/security/jwks",
]


@pytest.fixture
def lti_app(db_app, tmp_path, monkeypatch):
    """The test app with its instance folder (where the keys go) in tmp_path."""
    db_app.instance_path = str(tmp_path / "instance")
    os.makedirs(db_app.instance_path)
    return db_app


@pytest.fixture
def runner(lti_app):
    return lti_app.test_cli_runner()


def one_line_usage_error(result) -> str:
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert len(lines) == 1 and "Traceback" not in result.output
    return lines[0]


def test_add_list_and_remove_a_platform(lti_app, runner):
    added = runner.invoke(main, ["lti", "add-platform", *CANVAS, "--name", "Canvas"])
    assert added.exit_code == 0, added.output
    assert "registered platform 1: Canvas" in added.output
    listed = runner.invoke(main, ["lti", "list-platforms"])
    assert "https://sso.canvaslms.com/api/lti/security/jwks" in listed.output
    removed = runner.invoke(main, ["lti", "remove-platform", "1"])
    assert removed.exit_code == 0 and "removed platform 1" in removed.output
    assert (
        "no platforms registered"
        in runner.invoke(main, ["lti", "list-platforms"]).output
    )


@pytest.mark.parametrize(
    ("change", "says"),
    [
        (("--issuer", "canvas.instructure.com"), "issuer must be a full URL"),
        (
            ("--key-set-url", "http://lms.example/jwks"),
            "key set URL must be a full URL",
        ),
        (("--auth-login-url", "https://a b"), "auth login URL must be a full URL"),
        (("--auth-token-url", "https://[::1/token"), "auth token URL must be a full"),
        (("--auth-token-url", "https://lms.example:99999/"), "auth token URL must be"),
        (("--client-id", " "), "client id needs 1-255"),
        (("--deployment-id", "x" * 300), "deployment id needs 1-255"),
        (("--frame-origin", "javascript:alert(1)"), "frame origin must be a full URL"),
    ],
)
def test_add_platform_refuses_bad_values_in_one_line(lti_app, runner, change, says):
    args = list(CANVAS)
    if change[0] in args:
        args[args.index(change[0]) + 1] = change[1]
    else:
        args += list(change)
    assert says in one_line_usage_error(
        runner.invoke(main, ["lti", "add-platform", *args])
    )
    with lti_app.app_context():
        assert get_session().scalars(select(LtiPlatform)).all() == []


def test_remove_an_unknown_platform(runner):
    assert "No platform has id 9" in one_line_usage_error(
        runner.invoke(main, ["lti", "remove-platform", "9"])
    )
    one_line_usage_error(runner.invoke(main, ["lti", "remove-platform", "nine"]))


def test_push_grades_refuses_bad_input(lti_app, runner):
    assert "no class 5" in one_line_usage_error(
        runner.invoke(main, ["lti", "push-grades", "5"])
    )
    with lti_app.app_context():
        session = get_session()
        session.add(Classroom(name="Plain class", join_code="ABCDEFGH"))
        session.commit()
        class_id = session.scalar(select(Classroom.id))
    assert "not linked to an LMS course" in one_line_usage_error(
        runner.invoke(main, ["lti", "push-grades", str(class_id)])
    )
    one_line_usage_error(
        runner.invoke(main, ["lti", "push-grades", str(class_id), "--rule", "mastery"])
    )
    assert "not a date" in one_line_usage_error(
        runner.invoke(
            main,
            ["lti", "push-grades", str(class_id), "--retention-date", "2026-13-01"],
        )
    )


def test_keys_live_in_the_instance_folder_and_rotate(lti_app, runner):
    """Is the key private to its file, published while retiring, and never in
    the database?"""
    first = keys.signing_key(lti_app.instance_path)
    mode = stat.S_IMODE(os.stat(first.path).st_mode)
    assert mode == 0o600 and "PRIVATE KEY" in first.path.read_text()
    assert first.private_pem not in repr(first)
    rotated = runner.invoke(main, ["lti", "rotate-key"])
    assert rotated.exit_code == 0, rotated.output
    second = keys.signing_key(lti_app.instance_path)
    assert second.kid != first.kid
    published = [k["kid"] for k in keys.jwks(lti_app.instance_path)["keys"]]
    assert published == [first.kid, second.kid]
    retired = runner.invoke(main, ["lti", "retire-keys"])
    assert f"retired key {first.kid}" in retired.output
    assert [k["kid"] for k in keys.jwks(lti_app.instance_path)["keys"]] == [second.kid]


def test_no_key_or_token_in_the_database_or_the_log(lti_app, runner, caplog):
    """Would a copy of the database, or the log, give away a signing key?"""
    caplog.set_level(logging.DEBUG)
    runner.invoke(main, ["lti", "add-platform", *CANVAS])
    key = keys.signing_key(lti_app.instance_path)
    secret_part = key.private_pem.splitlines()[5]
    from quizsvc.db import get_engine

    engine = get_engine(lti_app)
    with engine.connect() as connection:
        for table in ("lti_platforms", "lti_deployments"):
            for row in connection.exec_driver_sql(f"SELECT * FROM {table}"):
                assert all(secret_part not in str(value) for value in row)
    assert secret_part not in caplog.text


def test_the_admin_page_shows_the_urls_to_paste_and_registers(lti_app):
    client = lti_app.test_client()
    make_learner(lti_app, "admin1")
    sign_in(client, "admin1")
    assert client.get("/lti/admin").status_code == 403
    with lti_app.app_context():
        from quizsvc.services.users import find_user

        session = get_session()
        find_user(session, "admin1").role = "admin"
        session.commit()
    page = client.get("/lti/admin").get_data(as_text=True)
    for path in ("/lti/login", "/lti/launch", "/lti/deep-link", "/lti/jwks"):
        assert f'value="http://localhost{path}"' in page
    assert "登录发起地址" in page and "还没有登记任何平台" in page
    token = page.split('name="csrf_token" value="')[1].split('"')[0]
    form = {
        "csrf_token": token,
        "name": "Moodle",
        "issuer": "https://moodle.school.example",
        "client_id": "abc",
        "deployment_ids": "1, 2",
        "auth_login_url": "https://moodle.school.example/mod/lti/auth.php",
        "auth_token_url": "https://moodle.school.example/mod/lti/token.php",
        "key_set_url": "ftp://moodle.school.example/mod/lti/certs.php",
    }
    bad = client.post("/lti/admin/platforms", data=form)
    assert bad.status_code == 400 and "公钥地址" in bad.get_data(as_text=True)
    form["key_set_url"] = "https://moodle.school.example/mod/lti/certs.php"
    good = client.post("/lti/admin/platforms", data=form, follow_redirects=True)
    text = good.get_data(as_text=True)
    assert "已登记 Moodle" in text and "1, 2" in text


def test_claims_read_as_canvas_and_moodle_send_them():
    """Roles from role URIs (context roles first), names, locale and endpoints."""
    for flavor in ("canvas", "moodle"):
        platform = SimulatedPlatform(flavor)
        try:
            platform.tool_url = "https://tool.example/"
            course = platform.add_course("c1", "Attention")
            for role, expected in (
                ("teacher", "teacher"),
                ("ta", "teacher"),
                ("learner", "learner"),
                ("observer", None),
            ):
                person = platform.add_person(
                    course, f"{role}1", "Li Lei", role, student_number="2026001"
                )
                claims = platform.claims(person, course, nonce="n")
                assert class_role(claims) == expected, (flavor, role)
                found = facts(claims)
                assert found.name == "Li Lei" and found.sub == person.sub
                assert found.student_number == "2026001"
                assert found.context_id == "c1" and found.memberships_url
                assert found.lineitems_url and len(found.ags_scopes) == 4
        finally:
            platform.close()
    assert interface_language("zh_cn") == "zh-CN"
    assert interface_language("zh-Hans-CN") == "zh-CN"
    assert interface_language("en-GB") == "en"
    assert interface_language("fr") is None and interface_language(None) is None


def test_one_push_at_a_time_and_a_stalled_one_is_closed(lti_app):
    """Is a second push refused while one runs, and one whose process died
    (no news for 5 minutes) marked failed so that a new one may start?"""
    from datetime import UTC, datetime, timedelta

    from quizsvc.lti import grades
    from quizsvc.models.lti import LtiContext
    from quizsvc.services import Conflict
    from quizsvc.services.classes import create_class
    from quizsvc.services.users import create_user

    now = datetime(2026, 12, 2, 8, 0, tzinfo=UTC)
    with lti_app.app_context():
        session = get_session()
        teacher = create_user(session, "wang", role="teacher")
        classroom = create_class(session, teacher, "Attention")
        context = LtiContext(
            issuer="https://canvas.instructure.com",
            client_id="1",
            deployment_id="1",
            context_id="c1",
            class_id=classroom.id,
            lineitems_url="https://lms.example/lineitems",
            ags_scopes=[grades.SCORE_SCOPE],
        )
        session.add(context)
        session.flush()
        first = grades.start_push(
            session, context, "accuracy", started_by=None, now=now
        )
        with pytest.raises(Conflict):
            grades.start_push(
                session,
                context,
                "accuracy",
                started_by=None,
                now=now + timedelta(minutes=1),
            )
        later = now + grades.STALL_AFTER + timedelta(seconds=1)
        second = grades.start_push(
            session, context, "retention", started_by=None, now=later
        )
        assert first.status == "failed" and "stalled" in first.message
        assert second.status == "running"
        with pytest.raises(ValueError, match="choose accuracy, retention"):
            grades.start_push(session, context, "mastery", started_by=None, now=later)


@given(st.text(max_size=80))
def test_a_registered_url_is_a_whole_https_url(text):
    """Whatever is typed, an accepted URL is https with a host and no spaces."""
    from urllib.parse import urlsplit

    from quizsvc.lti.platforms import _url
    from quizsvc.models.lti import URL_LENGTH
    from quizsvc.services import InvalidInput

    for candidate in (text, "https://" + text):
        try:
            url = _url(candidate, "The issuer", allow_http=False)
        except InvalidInput:
            continue
        parts = urlsplit(url)
        assert parts.scheme == "https" and parts.hostname
        assert not any(ch.isspace() for ch in url) and len(url) <= URL_LENGTH
