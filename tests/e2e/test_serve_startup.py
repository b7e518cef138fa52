"""`quizsvc serve` on a broken machine: one clear line, exit status 2, nothing left.

A full disk, an instance folder it may not write and a database it cannot
reach (refused, or accepting connections and never answering) each end the
start within seconds, with a line naming the cause instead of a traceback, and
leave no temporary folder, half-written key or empty instance folder behind.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.fixtures.faults import fill, silent_listener, small_disk


def serve(instance: Path, tmp: Path, **env: str) -> tuple[int, str, float]:
    """Run `quizsvc serve` until it exits; return its status, output and time."""
    exe = shutil.which("quizsvc", path=str(Path(sys.executable).parent))
    assert exe
    tmp.mkdir(exist_ok=True)
    environment = {
        **os.environ,
        "QUIZSVC_INSTANCE_PATH": str(instance),
        # Its own temporary folder, to see that the start leaves nothing there.
        "TMPDIR": str(tmp),
        **env,
    }
    environment.pop("QUIZSVC_DATABASE_URL", None)
    environment.update(env)
    started = time.monotonic()
    done = subprocess.run(
        [exe, "serve", "--port", "0", "--workers", "1"],
        capture_output=True,
        text=True,
        env=environment,
        timeout=60,
    )
    return done.returncode, done.stdout + done.stderr, time.monotonic() - started


def one_line_error(output: str) -> str:
    """The error line, after checking it is the only thing that went wrong."""
    assert "Traceback" not in output, output
    errors = [line for line in output.splitlines() if line.startswith("Error: ")]
    assert len(errors) == 1, output
    return errors[0]


@pytest.mark.slow
def test_a_full_disk_is_named_and_nothing_is_left_behind(tmp_path):
    instance = tmp_path / "instance"
    with small_disk(instance, 2048):
        filler = fill(instance)
        status, output, _ = serve(instance, tmp_path / "tmp")
        assert status == 2, output
        line = one_line_error(output)
        assert f"the disk holding {instance} is full" in line
        assert list((tmp_path / "tmp").iterdir()) == []
        # No empty secret key, no draft of one, no database half made.
        assert sorted(p.name for p in instance.iterdir()) == ["filler"], list(
            instance.iterdir()
        )
        # Once there is room again it starts.
        filler.unlink()
        exe = shutil.which("quizsvc", path=str(Path(sys.executable).parent))
        environment = {
            **os.environ,
            "QUIZSVC_INSTANCE_PATH": str(instance),
            "PYTHONUNBUFFERED": "1",
        }
        environment.pop("QUIZSVC_DATABASE_URL", None)
        with open(tmp_path / "serve.log", "w") as log:
            process = subprocess.Popen(
                [exe, "serve", "--port", "0", "--workers", "1"],
                stdout=log,
                stderr=subprocess.STDOUT,
                env=environment,
            )
        try:
            deadline = time.monotonic() + 60
            while "quizsvc is running" not in (tmp_path / "serve.log").read_text():
                assert process.poll() is None, (tmp_path / "serve.log").read_text()
                assert time.monotonic() < deadline
                time.sleep(0.1)
            assert len((instance / "secret_key").read_text().strip()) == 64
        finally:
            process.terminate()
            process.wait(timeout=30)


@pytest.mark.slow
def test_a_read_only_instance_folder_is_named(tmp_path):
    instance = tmp_path / "instance"
    with small_disk(instance, 1024, read_only=True):
        status, output, _ = serve(instance, tmp_path / "tmp")
    assert status == 2, output
    line = one_line_error(output)
    assert f"cannot write to the folder {instance}" in line
    assert list((tmp_path / "tmp").iterdir()) == []


def test_an_instance_folder_that_cannot_be_made_is_named(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    instance = blocker / "instance"
    status, output, _ = serve(instance, tmp_path / "tmp")
    assert status == 2, output
    assert f"the folder {instance} does not exist" in one_line_error(output)
    assert list((tmp_path / "tmp").iterdir()) == []


def test_a_refused_database_is_named_without_its_password(tmp_path):
    with silent_listener() as port:
        pass  # the port is free again: nothing listens there now
    url = f"postgresql+psycopg://quiz:s3cret@127.0.0.1:{port}/quizsvc"
    status, output, _ = serve(
        tmp_path / "instance", tmp_path / "tmp", QUIZSVC_DATABASE_URL=url
    )
    assert status == 2, output
    line = one_line_error(output)
    assert (
        f"cannot reach the database postgresql+psycopg://quiz:***@127.0.0.1:{port}/"
        in line
    )
    assert "s3cret" not in output
    assert "OperationalError" in line
    assert list((tmp_path / "tmp").iterdir()) == []
    # The instance folder this start made is gone again.
    assert not (tmp_path / "instance").exists()


@pytest.mark.slow
def test_a_database_that_never_answers_ends_the_start_in_seconds(tmp_path):
    with silent_listener() as port:
        status, output, took = serve(
            tmp_path / "instance",
            tmp_path / "tmp",
            QUIZSVC_DATABASE_URL=f"postgresql+psycopg://quiz@127.0.0.1:{port}/db",
        )
    assert status == 2, output
    assert "cannot reach the database" in one_line_error(output)
    assert took < 30, took
