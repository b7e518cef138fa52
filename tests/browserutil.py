"""Debian's Chromium for the browser tests: where it is, how it starts, the marks,
and the steps every browser test module takes (register, sign in, open an item)."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import pytest

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

# `pytestmark = BROWSER_MARKS` in a module of browser tests.
BROWSER_MARKS = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not Path(CHROMIUM).exists(),
        reason="Debian's chromium is not installed (.ci/run installs it "
        "with apt-get install -y chromium)",
    ),
]


# --- helpers shared by the browser test modules ---------------------------------

PASSWORD = "attention-by-hand"


def register(page, server: str, username: str) -> None:
    """Register a learner through the form and land on Today."""
    page.goto(server + "register")
    page.fill("#username", username)
    page.fill("#password", PASSWORD)
    page.fill("#confirm", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url("**/today")


def reopen_as(database: Path, username: str, item_id: str, problem=(None, None, None)):
    """Make the learner's open item another one (as if the queue had chosen it)."""
    kind, seed, level = problem
    with closing(sqlite3.connect(database)) as connection, connection:
        connection.execute(
            "UPDATE open_items SET item_id = ?, problem_kind = ?, problem_seed = ?, "
            "problem_level = ? WHERE user_id = "
            "(SELECT id FROM users WHERE username = ?)",
            (item_id, kind, seed, level, username),
        )


def open_problem_seed(database: Path, item_id: str) -> tuple[str, int, int]:
    """Which generated problem the server opened for this item (read from its DB)."""
    with closing(sqlite3.connect(database)) as connection:
        row = connection.execute(
            "SELECT problem_kind, problem_seed, problem_level FROM open_items "
            "WHERE item_id = ?",
            (item_id,),
        ).fetchone()
    return row


def create_teacher(instance: Path, username: str) -> None:
    """Make a teacher account the way an admin would: on the command line."""
    exe = shutil.which("quizsvc", path=str(Path(sys.executable).parent))
    env = {**os.environ, "QUIZSVC_INSTANCE_PATH": str(instance)}
    env.pop("QUIZSVC_DATABASE_URL", None)
    result = subprocess.run(
        [exe, "users", "create", username, "--role", "teacher", "--password-stdin"],
        input=PASSWORD + "\n",
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert result.returncode == 0, result.stderr


def sign_in(page, server: str, username: str) -> None:
    """Sign in through the login page and land on Today."""
    page.goto(server + "login")
    page.fill("#username", username)
    page.fill("#password", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url("**/today")
