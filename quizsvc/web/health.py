"""Liveness (`/healthz`) and readiness (`/readyz`) probes.

`/healthz` says the process serves requests and asks no dependency, so a
database outage never makes an orchestrator restart a healthy server.
`/readyz` checks every dependency (quizsvc.readiness) and answers 503 when the
server cannot do its job, within READYZ_TIMEOUT even when one hangs.
"""

from __future__ import annotations

from flask import Blueprint, current_app

from quizsvc import __version__
from quizsvc.readiness import check_readiness

bp = Blueprint("health", __name__)


@bp.get("/healthz")
def healthz():
    """Report that the process is alive (no dependency is asked)."""
    return {"status": "ok", "version": __version__}


@bp.get("/readyz")
def readyz():
    """Report whether each dependency answers and the server can serve."""
    readiness = check_readiness(current_app._get_current_object())
    body = {
        "status": readiness.status,
        "version": __version__,
        "checks": readiness.checks,
    }
    return body, 200 if readiness.ready else 503
