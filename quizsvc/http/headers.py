"""Security headers on every response (OWASP ASVS level 2, section 14.4).

Scripts come only from this site's static files (no inline script, no event
handler attributes); inline `style` attributes are allowed, since a progress
bar's width is set that way and a style cannot run code. Signed-in pages and
the API are never stored by a cache, so a shared computer's back button or a
proxy does not show one learner's page to the next.
"""

from __future__ import annotations

from flask import Flask, Response, request
from flask_login import current_user

CONTENT_SECURITY_POLICY = "; ".join(
    (
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self' 'unsafe-inline'",
        "img-src 'self' data:",
        "object-src 'none'",
        "base-uri 'self'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    )
)
HSTS = "max-age=31536000; includeSubDomains"


def add_security_headers(response: Response) -> Response:
    """Set the security headers; no-store on signed-in pages and the API."""
    headers = response.headers
    headers.setdefault("Content-Security-Policy", CONTENT_SECURITY_POLICY)
    headers.setdefault("X-Frame-Options", "DENY")
    headers.setdefault("X-Content-Type-Options", "nosniff")
    headers.setdefault("Referrer-Policy", "same-origin")
    if request.is_secure:
        # Only over HTTPS: a plain-HTTP answer cannot promise HTTPS (RFC 6797).
        headers.setdefault("Strict-Transport-Security", HSTS)
    if request.path.startswith("/api/") or (
        request.endpoint != "static" and current_user.is_authenticated
    ):
        headers["Cache-Control"] = "no-store"
        headers.add("Vary", "Cookie")
    return response


def init_app(app: Flask) -> None:
    """Add the headers to every response, error pages included."""
    app.after_request(add_security_headers)
