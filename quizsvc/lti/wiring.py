"""Wire the `lti` blueprint into the app: its routes, CSRF exemptions, frames."""

from __future__ import annotations

from flask import Flask

from quizsvc.extensions import csrf
from quizsvc.lti import class_pages, frame
from quizsvc.lti.views import bp, deep_link_launch, launch_view, login


def init_app(app: Flask) -> None:
    """Register the blueprint, its CSRF exemptions, frames and settings."""
    app.config.setdefault("LTI_ALLOW_HTTP", False)
    app.config.setdefault("LTI_RETRY_DELAYS", None)
    app.config.setdefault("LTI_PUSH_IN_BACKGROUND", True)
    frame.init_app(app)
    app.register_blueprint(bp)
    for view in (login, launch_view, deep_link_launch):
        csrf.exempt(view)
    app.jinja_env.globals["lti_class_panel"] = class_pages.class_panel
