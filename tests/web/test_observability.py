"""Request ids, one log line per request, tracebacks with the id, /metrics."""

from __future__ import annotations

import json
import logging
import re
import urllib.error
import urllib.request

import pytest
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError

from quizsvc import metrics
from quizsvc.db import get_session
from tests.factories import (
    PASSWORD,
    graded_item,
    make_learner,
    record,
    sign_in,
    sync_real_bank,
)
from tests.fixtures.serving import start_server, stop_server


@pytest.fixture
def app(db_app):
    return db_app


def request_lines(caplog) -> list[dict]:
    return [
        json.loads(record.getMessage())
        for record in caplog.records
        if record.name == "quizsvc.requests"
    ]


def test_each_request_is_one_structured_line_without_secrets(app, caplog):
    user_id = make_learner(app, "ana")
    client = app.test_client()
    with caplog.at_level(logging.INFO, logger="quizsvc.requests"):
        sign_in(client, "ana")
        token = client.post("/api/v1/tokens", json={"name": "script"}).json["token"]
        response = client.get("/drill/result/5")
    lines = request_lines(caplog)
    assert [line["route"] for line in lines] == [
        "/api/v1/auth/login",
        "/api/v1/tokens",
        "/drill/result/<int:review_id>",
    ]
    last = lines[-1]
    assert last["status"] == response.status_code
    assert last["user_id"] == user_id and last["method"] == "GET"
    assert last["request_id"] == response.headers["X-Request-ID"]
    assert isinstance(last["duration_ms"], float)
    assert lines[0]["user_id"] is None or lines[0]["user_id"] == user_id
    assert PASSWORD not in caplog.text and token not in caplog.text


def test_a_client_request_id_is_kept_when_it_is_plain(client):
    assert (
        client.get("/healthz", headers={"X-Request-ID": "abc123def456"}).headers[
            "X-Request-ID"
        ]
        == "abc123def456"
    )
    odd = client.get("/healthz", headers={"X-Request-ID": "<script>"})
    assert re.fullmatch(r"[0-9a-f]{32}", odd.headers["X-Request-ID"])


@pytest.fixture
def failing_app(app):
    def boom():
        raise RuntimeError("the disk is on fire")

    app.add_url_rule("/boom", "boom", boom)
    app.add_url_rule("/api/v1/boom", "api_boom", boom)
    return app


def test_a_server_error_logs_its_traceback_with_the_request_id(failing_app, caplog):
    client = failing_app.test_client()
    with caplog.at_level(logging.INFO):
        page = client.get("/boom?lang=en")
    reference = page.headers["X-Request-ID"]
    assert page.status_code == 500
    html = page.get_data(as_text=True)
    assert reference in html and "the disk is on fire" not in html
    errors = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert len(errors) == 1 and reference in errors[0].getMessage()
    assert "the disk is on fire" in caplog.text  # the traceback
    api = client.get("/api/v1/boom")
    assert api.status_code == 500
    assert api.json["request_id"] == api.headers["X-Request-ID"]
    assert api.json["error"] == "internal_server_error"


def sample(body: str, name: str, **labels) -> float:
    """The value of one sample in Prometheus text, 0 when absent."""
    wanted = ",".join(f'{key}="{value}"' for key, value in sorted(labels.items()))
    for line in body.splitlines():
        if line.startswith("#"):
            continue
        metric, _, value = line.rpartition(" ")
        found_name, _, found_labels = metric.partition("{")
        found = (
            ",".join(sorted(found_labels.rstrip("}").split(",")))
            if found_labels
            else ""
        )
        if found_name == name and found == wanted:
            return float(value)
    return 0.0


def test_metrics_count_requests_per_route(client):
    before = sample(
        client.get("/metrics").get_data(as_text=True),
        "quizsvc_requests_total",
        method="GET",
        route="/healthz",
        status="200",
    )
    for _ in range(3):
        client.get("/healthz")
    body = client.get("/metrics").get_data(as_text=True)
    assert "text/plain" in client.get("/metrics").content_type
    count = sample(
        body, "quizsvc_requests_total", method="GET", route="/healthz", status="200"
    )
    assert count == before + 3
    assert sample(body, "quizsvc_request_duration_seconds_count", route="/healthz") >= 3


def test_metrics_are_only_for_configured_addresses(app):
    client = app.test_client()
    outside = {"REMOTE_ADDR": "203.0.113.9"}
    assert client.get("/metrics", environ_base=outside).status_code == 404
    assert (
        client.get("/metrics", environ_base={"REMOTE_ADDR": "::1"}).status_code == 200
    )
    app.config["METRICS_ALLOWED"] = "203.0.113.0/24"
    assert client.get("/metrics", environ_base=outside).status_code == 200
    assert client.get("/metrics").status_code == 404


def test_metrics_count_reviews_and_database_errors(app):
    sync_real_bank(app)
    user_id = make_learner(app, "ana")
    from datetime import timedelta

    reviews_before = metrics.REVIEWS._value.get()
    record(app, user_id, graded_item("scores"), True, timedelta(days=1))
    assert metrics.REVIEWS._value.get() == reviews_before + 1
    kinds = ("OperationalError", "ProgrammingError")  # SQLite, PostgreSQL
    before = {kind: metrics.DATABASE_ERRORS.labels(kind)._value.get() for kind in kinds}
    with app.app_context(), pytest.raises(DBAPIError) as raised:
        get_session().execute(text("SELECT * FROM no_such_table"))
    kind = type(raised.value).__name__
    assert metrics.DATABASE_ERRORS.labels(kind)._value.get() == before[kind] + 1


@pytest.mark.slow
def test_metrics_add_up_every_worker_of_a_real_server(tmp_path):
    """Does /metrics count the requests all four workers answered?"""
    process, url = start_server(tmp_path, "--workers", "4")
    try:
        for _ in range(40):
            with urllib.request.urlopen(url + "healthz", timeout=10) as response:
                assert response.status == 200
        with urllib.request.urlopen(url + "metrics", timeout=10) as response:
            body = response.read().decode()
        count = sample(
            body,
            "quizsvc_requests_total",
            method="GET",
            route="/healthz",
            status="200",
        )
        assert count == 40
        log = (tmp_path / "serve.log").read_text()
        lines = [json.loads(line) for line in log.splitlines() if line.startswith("{")]
        assert sum(line["route"] == "/healthz" for line in lines) == 40
        assert len({line["request_id"] for line in lines}) == len(lines)
    finally:
        stop_server(process)
