"""`quizsvc serve` runs the app under gunicorn, its database in the instance folder."""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest


def start_server(
    instance: Path, *extra: str, new_session: bool = False
) -> tuple[subprocess.Popen, str]:
    """Start `quizsvc serve` on a free port and return the process and its URL.

    The server's output goes to a log file in the instance folder: a pipe that
    nobody reads would fill up and stall the server after a few hundred requests.
    """
    exe = shutil.which("quizsvc", path=str(Path(sys.executable).parent))
    assert exe, "the quizsvc console script is installed next to the interpreter"
    env = {
        **os.environ,
        "QUIZSVC_INSTANCE_PATH": str(instance),
        "PYTHONUNBUFFERED": "1",
    }
    env.pop("QUIZSVC_DATABASE_URL", None)
    log_path = instance / "serve.log"
    with open(log_path, "w") as log:
        process = subprocess.Popen(
            [exe, "serve", "--port", "0", "--workers", "1", *extra],
            stdout=log,
            stderr=subprocess.STDOUT,
            text=True,
            env=env,
            start_new_session=new_session,
        )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and process.poll() is None:
        match = re.search(r"open (http://\S+/)", log_path.read_text())
        if match:
            return process, match.group(1)
        time.sleep(0.1)
    stop_server(process)
    pytest.fail("server did not announce its URL:\n" + log_path.read_text())


def stop_server(process: subprocess.Popen) -> None:
    """Stop the server."""
    process.terminate()
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def test_serve_answers_health_and_the_lab(tmp_path):
    process, url = start_server(tmp_path)
    try:
        with urllib.request.urlopen(url + "healthz", timeout=10) as response:
            assert response.status == 200
            assert response.headers["Server"].startswith("gunicorn")
        with urllib.request.urlopen(url + "lab", timeout=10) as response:
            assert "0.6698" in response.read().decode()
        assert (tmp_path / "quizsvc.sqlite3").exists()
    finally:
        stop_server(process)


def test_ctrl_c_stops_promptly_and_quietly(tmp_path):
    """With a client holding a half-sent request, does Ctrl+C (SIGINT to the
    whole process group, as a terminal sends it) stop the service without
    waiting out the graceful timeout and without the arbiter's SIGKILL?"""
    process, url = start_server(tmp_path, "--workers", "2", new_session=True)
    host, port = url.removeprefix("http://").rstrip("/").split(":")
    slow = [socket.create_connection((host, int(port))) for _ in range(3)]
    try:
        for client in slow:
            client.sendall(b"GET /lab HTTP/1.1\r\nHost: x\r\n")  # never ends
        with urllib.request.urlopen(url + "healthz", timeout=10) as response:
            assert response.status == 200
        os.killpg(process.pid, signal.SIGINT)
        # The graceful timeout is 10 s; a prompt stop takes a fraction of it.
        assert process.wait(timeout=8) == 0
    finally:
        for client in slow:
            client.close()
        if process.poll() is None:
            stop_server(process)
    log = (tmp_path / "serve.log").read_text()
    assert "SIGKILL" not in log and "Traceback" not in log
