"""Prometheus metrics at /metrics: requests, latencies, reviews, database errors.

Under `quizsvc serve` every gunicorn worker writes its samples to a per-run
directory (`PROMETHEUS_MULTIPROC_DIR`, set by quizsvc.server before any worker
starts), and /metrics adds up all workers (prometheus_client's multiprocess
mode), so a scrape that lands on any worker sees the whole server. Without the
variable (tests, `flask run`) the process's own registry is served.

Only the addresses in `METRICS_ALLOWED` (default 127.0.0.1 and ::1; set
QUIZSVC_METRICS_ALLOWED="10.0.0.0/8,127.0.0.1") may read it; others get 404.
"""

from __future__ import annotations

import ipaddress
import os

from flask import Blueprint, Flask, Response, abort, current_app, g, request
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Histogram,
    generate_latest,
    multiprocess,
)
from sqlalchemy import event
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session

from quizsvc.http.requestlog import route_of_request
from quizsvc.models import Review

MULTIPROCESS_VARIABLE = "PROMETHEUS_MULTIPROC_DIR"

REQUESTS = Counter(
    "quizsvc_requests",
    "HTTP requests answered, by method, route and status.",
    ("method", "route", "status"),
)
LATENCY = Histogram(
    "quizsvc_request_duration_seconds",
    "Time to answer a request, by route.",
    ("route",),
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
)
REVIEWS = Counter("quizsvc_reviews_recorded", "Answers stored in the review log.")
DATABASE_ERRORS = Counter(
    "quizsvc_database_errors",
    "Errors raised by the database, by SQLAlchemy exception class.",
    ("error",),
)

bp = Blueprint("metrics", __name__)


def _allowed_networks() -> list[ipaddress.IPv4Network | ipaddress.IPv6Network]:
    setting = current_app.config["METRICS_ALLOWED"]
    entries = setting.split(",") if isinstance(setting, str) else setting
    return [ipaddress.ip_network(e.strip(), strict=False) for e in entries if e.strip()]


@bp.get("/metrics")
def metrics() -> Response:
    """The metrics in Prometheus's text format (configured addresses only)."""
    try:
        address = ipaddress.ip_address(request.remote_addr or "")
    except ValueError:
        abort(404)
    if not any(address in network for network in _allowed_networks()):
        # As if there were nothing here: the address list is not advertised.
        abort(404)
    if os.environ.get(MULTIPROCESS_VARIABLE):
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
        body = generate_latest(registry)
    else:
        body = generate_latest()
    return Response(body, mimetype=CONTENT_TYPE_LATEST)


def _count_request(response: Response) -> Response:
    route = route_of_request()
    REQUESTS.labels(request.method, route, str(response.status_code)).inc()
    duration = g.get("request_duration")
    if duration is not None:
        LATENCY.labels(route).observe(duration)
    return response


def _note_new_reviews(session: Session, _flush_context, _instances) -> None:
    added = sum(isinstance(row, Review) for row in session.new)
    if added:
        session.info["reviews_pending"] = session.info.get("reviews_pending", 0) + added


def _count_committed_reviews(session: Session) -> None:
    added = session.info.pop("reviews_pending", 0)
    if added:
        REVIEWS.inc(added)


def _forget_rolled_back_reviews(session: Session) -> None:
    session.info.pop("reviews_pending", None)


def _count_database_error(context) -> None:
    # SQLAlchemy's class (OperationalError, IntegrityError, …) names the kind
    # of failure the same way on both backends.
    wrapped = context.sqlalchemy_exception or context.original_exception
    DATABASE_ERRORS.labels(type(wrapped).__name__).inc()


def _listen_once() -> None:
    if event.contains(Engine, "handle_error", _count_database_error):
        return
    event.listen(Session, "before_flush", _note_new_reviews)
    event.listen(Session, "after_commit", _count_committed_reviews)
    event.listen(Session, "after_rollback", _forget_rolled_back_reviews)
    event.listen(Engine, "handle_error", _count_database_error)


def init_app(app: Flask) -> None:
    """Serve /metrics and count requests, reviews and database errors."""
    app.register_blueprint(bp)
    # Registered before the request log's hook, so it runs after it (Flask runs
    # after-request hooks in reverse) and sees the measured duration.
    app.after_request(_count_request)
    _listen_once()
