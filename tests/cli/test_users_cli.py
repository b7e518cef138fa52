"""`quizsvc users`: roles are granted on the command line, never by registering."""

from __future__ import annotations

import pytest

from quizsvc.cli import main
from quizsvc.db import get_session
from quizsvc.services.accounts import authenticate
from quizsvc.services.users import find_user


@pytest.fixture
def runner(db_app):
    return db_app.test_cli_runner()


def role_of(app, username: str) -> str | None:
    with app.app_context():
        user = find_user(get_session(), username)
        return user.role if user is not None else None


def test_create_a_teacher_with_a_password_from_stdin(db_app, runner):
    """Can the new teacher sign in with the password piped in?"""
    result = runner.invoke(
        main,
        ["users", "create", "wang", "--role", "teacher", "--password-stdin"],
        input="a long secret\n",
    )
    assert result.exit_code == 0, result.output
    assert "created teacher 'wang'" in result.output
    with db_app.app_context():
        user = authenticate(get_session(), "wang", "a long secret")
        assert user is not None and user.role == "teacher"


def test_create_prompts_for_the_password_twice(db_app, runner):
    result = runner.invoke(
        main, ["users", "create", "li"], input="a long secret\na long secret\n"
    )
    assert result.exit_code == 0, result.output
    assert role_of(db_app, "li") == "learner"


@pytest.mark.parametrize(
    ("args", "stdin", "message"),
    [
        (["users", "create", "x", "--password-stdin"], "short\n", "at least 8"),
        (["users", "create", "bad name", "--password-stdin"], "long enough\n", "must"),
        (["users", "create", "x", "--role", "king", "--password-stdin"], "", "king"),
        (["users", "set-role", "nobody", "teacher"], "", "no account 'nobody'"),
        (["users", "set-role", "x", "emperor"], "", "emperor"),
    ],
)
def test_bad_input_exits_2_with_a_message_and_creates_nothing(
    db_app, runner, args, stdin, message
):
    result = runner.invoke(main, args, input=stdin)
    assert result.exit_code == 2
    assert message in result.output
    assert role_of(db_app, "x") is None


def test_a_taken_username_exits_2(db_app, runner):
    args = ["users", "create", "wang", "--password-stdin"]
    assert runner.invoke(main, args, input="a long secret\n").exit_code == 0
    result = runner.invoke(main, args, input="a long secret\n")
    assert result.exit_code == 2 and "taken" in result.output


def test_set_role_and_list(db_app, runner):
    for name in ("wang", "ana"):
        runner.invoke(
            main, ["users", "create", name, "--password-stdin"], input="long secret\n"
        )
    result = runner.invoke(main, ["users", "set-role", "wang", "teacher"])
    assert result.exit_code == 0 and "learner -> teacher" in result.output
    assert role_of(db_app, "wang") == "teacher"
    listed = runner.invoke(main, ["users", "list"]).output.splitlines()
    assert [line.split()[:2] for line in listed] == [
        ["ana", "learner"],
        ["wang", "teacher"],
    ]
    teachers = runner.invoke(main, ["users", "list", "--role", "teacher"]).output
    assert "wang" in teachers and "ana" not in teachers


def test_registering_with_a_role_is_refused(db_app):
    """Does the register API refuse a `role` field instead of ignoring it?"""
    client = db_app.test_client()
    response = client.post(
        "/api/v1/auth/register",
        json={"username": "eve", "password": "long enough", "role": "teacher"},
    )
    assert response.status_code == 400
    assert response.json["error"] == "invalid_input"
    assert role_of(db_app, "eve") is None
    plain = client.post(
        "/api/v1/auth/register", json={"username": "eve", "password": "long enough"}
    )
    assert plain.status_code == 201 and plain.json["user"]["role"] == "learner"
