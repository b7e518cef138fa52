"""`quizsvc serve` runs the app under gunicorn, its database in the instance folder."""

from __future__ import annotations

import os
import signal
import socket
import urllib.request

from tests.fixtures.serving import start_server, stop_server


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
