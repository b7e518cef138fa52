"""Calling a platform's services (NRPS, AGS) with pylti1p3, within seconds.

pylti1p3's ServiceConnector obtains the access token (a client-credentials
grant with a JWT assertion signed by the tool's key) and makes the calls;
here it gets an HTTP session that never waits more than a few seconds, and a
token cache in memory only (never in the database) that a 401 can clear.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import requests
from pylti1p3.service_connector import REQUESTS_USER_AGENT, ServiceConnector
from sqlalchemy.orm import Session

from quizsvc.lti.platforms import find_platform, registration
from quizsvc.models.lti import LtiContext
from quizsvc.services.errors import N_, Conflict

# Seconds to connect and to wait for an answer: a platform that does not
# answer is reported, not waited for.
DEFAULT_TIMEOUT = (3.05, 10)


class TimeoutSession(requests.Session):
    """A requests session whose every call has a timeout."""

    def __init__(self, timeout: Any = DEFAULT_TIMEOUT):
        super().__init__()
        self.timeout = timeout
        self.headers["User-Agent"] = f"quizsvc ({REQUESTS_USER_AGENT})"

    def request(self, *args, **kwargs):
        kwargs.setdefault("timeout", self.timeout)
        return super().request(*args, **kwargs)


class MemoryTokenConnector(ServiceConnector):
    """pylti1p3's connector with access tokens kept in this process's memory."""

    _tokens: dict[str, tuple[str, float]] = {}
    _lock = threading.Lock()

    def _key(self, scope_key: str) -> str:
        return f"{self._registration.get_client_id()}|{scope_key}"

    def _get_cached_access_token(self, scope_key: str) -> str | None:
        with self._lock:
            cached = self._tokens.get(self._key(scope_key))
        if cached and cached[1] > time.monotonic():
            return cached[0]
        return None

    def _cache_access_token(self, scope_key: str, access_token: str, expires_in):
        # A token is reused until a minute before it expires.
        lifetime = max(float(expires_in or 0) - 60, 0)
        with self._lock:
            self._tokens[self._key(scope_key)] = (
                access_token,
                time.monotonic() + lifetime,
            )

    def forget_token(self, scopes: list[str]) -> None:
        """Drop the cached token for these scopes (after the platform refused it)."""
        with self._lock:
            self._tokens.pop(self._key(self._scope_key(sorted(scopes))), None)


def connector_for(
    session: Session,
    context: LtiContext,
    instance_path: str,
    *,
    timeout: Any = DEFAULT_TIMEOUT,
) -> MemoryTokenConnector:
    """The service connector for a course's platform (Conflict if unregistered)."""
    platform = find_platform(session, context.issuer, context.client_id)
    if platform is None:
        raise Conflict(
            N_(
                "The LMS this course lives on is no longer registered (an admin "
                "can register it again on the LTI page)."
            )
        )
    return MemoryTokenConnector(
        registration(platform, instance_path), TimeoutSession(timeout)
    )
