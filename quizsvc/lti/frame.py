"""Pages inside the LMS's iframe: cookies and frame-ancestors for the LTI flow only.

A browser that started an LTI login carries a mark in its session. For that
browser only:

- the session cookie is `SameSite=None; Secure; Partitioned`, so it comes
  back in the platform's cross-site POST to /lti/launch and in every page
  opened inside the iframe (partitioned: it lives in the LMS's cookie jar,
  not beside a quizsvc tab the same person has open);
- each response may be framed by the launching platform's origins and no
  other (`Content-Security-Policy: frame-ancestors …`, no X-Frame-Options).

Everyone else keeps `SameSite=Lax` cookies and `frame-ancestors 'none'`.
"""

from __future__ import annotations

from flask import Flask, Response, g, has_request_context, session

# The session key of the mark: the origins that may frame this browser's pages,
# space-separated ("" while the login has not yet named a platform).
FRAME_KEY = "lti_frame"


def mark_lti_flow(ancestors: list[str] | None = None) -> None:
    """Mark this browser's session as inside an LMS (optionally naming its origins)."""
    session[FRAME_KEY] = " ".join(ancestors or [])


def in_lti_flow() -> bool:
    """True when this request's session comes from an LTI launch or login."""
    return has_request_context() and FRAME_KEY in session


class FrameAwareCookies:
    """Session-interface mix-in: LTI sessions' cookies cross sites."""

    def get_cookie_samesite(self, app: Flask):
        return "None" if in_lti_flow() else super().get_cookie_samesite(app)

    def get_cookie_secure(self, app: Flask) -> bool:
        return True if in_lti_flow() else super().get_cookie_secure(app)

    def get_cookie_partitioned(self, app: Flask) -> bool:
        return True if in_lti_flow() else super().get_cookie_partitioned(app)


def frame_aware(interface):
    """The app's session interface, with LTI sessions' cookies made to cross sites."""
    if isinstance(interface, FrameAwareCookies):
        return interface
    cls = type(interface)
    mixed = type(f"FrameAware{cls.__name__}", (FrameAwareCookies, cls), {})
    interface.__class__ = mixed
    return interface


def allow_platform_frame(response: Response) -> Response:
    """Let the launching platform (and only it) frame an LTI session's response."""
    override = g.get("lti_frame_ancestors")
    if override is None and not in_lti_flow():
        return response
    ancestors = override or session.get(FRAME_KEY) or "'none'"
    policy = response.headers.get("Content-Security-Policy")
    directives = []
    for part in (policy or "").split(";"):
        part = part.strip()
        if part.startswith("form-action") and g.get("lti_form_action"):
            # A deep-linking response posts its signed items back to the LMS.
            part = f"{part} {g.lti_form_action}"
        if part and not part.startswith("frame-ancestors"):
            directives.append(part)
    directives.append(f"frame-ancestors {ancestors}")
    response.headers["Content-Security-Policy"] = "; ".join(directives)
    if ancestors == "'none'":
        response.headers["X-Frame-Options"] = "DENY"
    else:
        # frame-ancestors supersedes it; X-Frame-Options cannot name an origin.
        response.headers.pop("X-Frame-Options", None)
    return response


def init_app(app: Flask) -> None:
    """Make LTI sessions' cookies cross sites and their pages frameable."""
    app.session_interface = frame_aware(app.session_interface)
    app.after_request(allow_platform_frame)
