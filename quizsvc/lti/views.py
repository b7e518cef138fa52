"""The `lti` blueprint's tool endpoints: login initiation, launch, JWKS and deep
linking (the admin page and the classes' LMS pages are in `class_pages`).

The launch endpoints take cross-site POSTs from the platform, so they are
exempt from CSRF: the signed id_token, the state cookie and the nonce are
their proof. Everything a teacher clicks afterwards is an ordinary form.
"""

from __future__ import annotations

import logging
from typing import Any

from flask import (
    Blueprint,
    abort,
    current_app,
    flash,
    g,
    jsonify,
    redirect,
    render_template,
    request,
    session,
    url_for,
)
from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l
from flask_login import login_required
from pylti1p3.deep_link_resource import DeepLinkResource

from quizsvc import problems
from quizsvc.db import get_session, transaction
from quizsvc.i18n import remember_language
from quizsvc.lti import accounts, frame, keys, launch, platforms
from quizsvc.lti.launch import LaunchRefused
from quizsvc.services import ServiceError

log = logging.getLogger("quizsvc.lti")
bp = Blueprint("lti", __name__, url_prefix="/lti")

DEEP_LINK_KEY = "lti_deep_link"
DRILL_TARGET = "drill"
PRACTICE_TARGET = "practice"

# The refusal pages: (HTTP status, title, what happened and what to do).
REFUSALS = {
    "unknown_platform": (
        403,
        _l("This LMS is not registered"),
        _l(
            "quizsvc does not know the platform this launch came from. An "
            "administrator registers it on quizsvc's LTI page (or with quizsvc "
            "lti add-platform); then open the tool again from the course."
        ),
    ),
    "wrong_audience": (
        403,
        _l("This launch was meant for another tool"),
        _l(
            "The launch names a client id that is not registered for this "
            "platform. Check the client id on quizsvc's LTI page against the "
            "one the LMS shows for quizsvc."
        ),
    ),
    "unknown_deployment": (
        403,
        _l("This deployment is not registered"),
        _l(
            "The course uses a deployment of quizsvc that is not registered. "
            "An administrator adds its deployment id on quizsvc's LTI page."
        ),
    ),
    "expired": (
        403,
        _l("This launch has expired"),
        _l(
            "The sign-in message from the LMS is too old to be used. Open "
            "quizsvc again from the course."
        ),
    ),
    "bad_signature": (
        403,
        _l("This launch could not be verified"),
        _l(
            "The sign-in message is not signed by the platform's key, or its "
            "times are wrong. Open quizsvc again from the course; if this "
            "repeats, tell the administrator."
        ),
    ),
    "platform_keys": (
        503,
        _l("The LMS's keys could not be read"),
        _l(
            "quizsvc could not fetch the platform's public keys to check the "
            "launch. Try again in a minute; if this repeats, the key set URL "
            "registered for the platform may be wrong."
        ),
    ),
    "replayed": (
        403,
        _l("This launch was already used"),
        _l(
            "Each launch from the LMS can sign in once. Open quizsvc again "
            "from the course."
        ),
    ),
    "nonce": (
        403,
        _l("This launch did not start in this browser"),
        _l(
            "The launch does not match a sign-in started here. Open quizsvc "
            "again from the course."
        ),
    ),
    "state": (
        403,
        _l("The launch lost its way"),
        _l(
            "The launch did not start here, took too long, or the browser "
            "blocked quizsvc's cookies inside the course page. Open quizsvc "
            "again from the course; if this repeats, allow cookies for "
            "quizsvc or set the link to open in a new window."
        ),
    ),
    "bad_message": (
        400,
        _l("The launch could not be read"),
        _l(
            "The LMS sent a launch quizsvc cannot use. Open quizsvc again from "
            "the course; if this repeats, tell the administrator."
        ),
    ),
    "role": (
        403,
        _l("quizsvc is for the course's learners and instructors"),
        _l(
            "Your role in this course (for example observer or guest) has no "
            "place in quizsvc."
        ),
    ),
    "no_course": (
        400,
        _l("Choosing content needs a course"),
        _l("Add quizsvc from inside a course of the LMS."),
    ),
}

# Problem kinds, titled as on the practice page (the same catalogue entries).
KIND_TITLES = {
    "scores": _l("Scores S"),
    "softmax_row": _l("Softmax of one row"),
    "weights": _l("Weights A"),
    "output": _l("Output O"),
    "attention": _l("The whole computation"),
    "causal": _l("Causal mask"),
    "padding_mask": _l("Padding mask"),
    "shapes": _l("Shapes"),
    "scale": _l("The 1/√d scale"),
    "temperature": _l("Temperature"),
    "shift_invariance": _l("Shifting a row"),
    "uniform": _l("Equal scores"),
    "lesson_example": _l("The lesson's example"),
}
RULE_NAMES = {"accuracy": _l("Accuracy"), "retention": _l("Retention")}
RULE_LABELS = {
    "accuracy": _l("Accuracy: the share of right answers"),
    "retention": _l("Retention: predicted recall on a date"),
}


def instance_folder() -> str:
    return current_app.instance_path


def tool_urls() -> dict[str, str]:
    """The URLs an LMS asks for when quizsvc is added to it."""
    return {
        "login": url_for("lti.login", _external=True),
        "launch": url_for("lti.launch_view", _external=True),
        "deep_link": url_for("lti.deep_link_launch", _external=True),
        "jwks": url_for("lti.jwks", _external=True),
    }


# --- refusals ---------------------------------------------------------------------


def _refused(exc: LaunchRefused):
    status, title, message = REFUSALS[exc.reason]
    log.warning(
        "lti launch refused: reason=%s issuer=%s detail=%s",
        exc.reason,
        exc.issuer or "-",
        exc.detail,
    )
    registered = None
    if exc.issuer:
        registered = [
            origin
            for platform in get_session().scalars(
                platforms.select_platforms_by_issuer(exc.issuer)
            )
            for origin in platforms.frame_ancestors(platform)
        ]
    # A registered platform may show the page in its frame. So may an LMS not
    # registered (yet): the page stores nothing and offers nothing to click
    # into, and the person setting quizsvc up must read why it refused. A
    # request that names no platform at all is not an LMS's: no frame.
    if registered:
        g.lti_frame_ancestors = " ".join(dict.fromkeys(registered))
    else:
        g.lti_frame_ancestors = "*" if exc.issuer else "'none'"
    return render_template(
        "lti/refused.html",
        status=status,
        title=title,
        message=message,
        reason=exc.reason,
    ), status


# --- the tool's endpoints -----------------------------------------------------------


@bp.get("/jwks")
def jwks():
    """The tool's public keys, for platforms to check what quizsvc signs."""
    response = jsonify(keys.jwks(instance_folder()))
    response.headers["Cache-Control"] = "public, max-age=3600"
    return response


def _redirect_uri() -> str:
    urls = tool_urls()
    target = request.values.get("target_link_uri", "")
    return target if target in (urls["launch"], urls["deep_link"]) else urls["launch"]


@bp.route("/login", methods=["GET", "POST"])
def login():
    """OIDC login initiation: send the browser to the platform's auth URL."""
    issuer = request.values.get("iss", "")
    registered = list(
        get_session().scalars(platforms.select_platforms_by_issuer(issuer))
    )
    if registered:
        # From here on this browser's cookies must cross sites (quizsvc.lti.frame).
        frame.mark_lti_flow(
            [o for platform in registered for o in platforms.frame_ancestors(platform)]
        )
    try:
        return launch.oidc_login(get_session(), instance_folder(), _redirect_uri())
    except LaunchRefused as exc:
        return _refused(exc)


@bp.post("/launch")
def launch_view():
    """The platform's launch: validate it, sign the user in, open their page."""
    return _launch()


@bp.post("/deep-link")
def deep_link_launch():
    """A deep-linking request (the LMS's content picker); same checks as a launch."""
    return _launch()


def _launch():
    db = get_session()
    try:
        claims = launch.validated_claims(db, instance_folder())
        found = launch.facts(claims)
        with transaction() as db:
            launch.use_nonce(db, claims)
            deep_linking = found.message_type == "LtiDeepLinkingRequest"
            if deep_linking and found.role != "teacher":
                raise LaunchRefused("role", "deep linking by a non-instructor")
            if deep_linking and not found.deep_linking:
                raise LaunchRefused("bad_message", "no deep linking settings")
            outcome = accounts.bind_launch(db, found)
            accounts.sign_in(db, outcome.user)
            platform = platforms.find_platform(db, found.issuer, found.client_id)
            ancestors = platforms.frame_ancestors(platform) if platform else []
    except LaunchRefused as exc:
        return _refused(exc)
    except ServiceError as exc:
        log.warning("lti launch failed: %s", exc)
        return _refused(LaunchRefused("bad_message", str(exc)))
    frame.mark_lti_flow(ancestors)
    language = launch.interface_language(found.locale)
    if language:
        remember_language(language)
    log.info(
        "lti launch: user=%s role=%s class=%s new=%s",
        outcome.user.id,
        outcome.role,
        outcome.classroom.id if outcome.classroom else "-",
        outcome.new_account,
    )
    if deep_linking:
        settings = found.deep_linking or {}
        session[DEEP_LINK_KEY] = {
            "iss": found.issuer,
            "client_id": found.client_id,
            "deployment_id": found.deployment_id,
            "return_url": settings.get("deep_link_return_url"),
            "data": settings.get("data"),
            "multiple": str(settings.get("accept_multiple", "true")).lower() != "false",
        }
        return redirect(url_for("lti.deep_link_choose"))
    return redirect(_landing(outcome, found.custom))


def _landing(outcome: accounts.LaunchOutcome, custom: dict[str, str]) -> str:
    if outcome.role == "teacher":
        if outcome.classroom is not None:
            return url_for("teacher.overview", class_id=outcome.classroom.id)
        return url_for("teacher.classes")
    if outcome.classroom is None:
        flash(
            _(
                "Your teacher has not opened quizsvc in this course yet; your "
                "practice counts, and you join the class when they do."
            ),
            "info",
        )
    if custom.get("quizsvc_target") == PRACTICE_TARGET:
        kind, level = custom.get("quizsvc_kind"), custom.get("quizsvc_level")
        if kind in problems.KINDS and level in {str(n) for n in problems.LEVELS}:
            return url_for("practice.practice", kind=kind, level=level)
    return url_for("drill.drill_page")


# --- deep linking -----------------------------------------------------------------


def _deep_link_request() -> dict[str, Any]:
    pending = session.get(DEEP_LINK_KEY)
    if not pending or not pending.get("return_url"):
        abort(400, description=_("Open the content picker from the LMS again."))
    return pending


@bp.get("/deep-link/choose")
@login_required
def deep_link_choose():
    """The content picker: the daily drill, or a practice set by kind and level."""
    _deep_link_request()
    return render_template(
        "lti/deep_link.html",
        kinds=[(kind, KIND_TITLES.get(kind, kind)) for kind in problems.KINDS],
        levels=problems.LEVELS,
    )


def deep_link_resources(choice: str, kind: str | None, level: str | None):
    """The content items for a picker choice (None when the choice is not valid)."""
    launch_url = tool_urls()["launch"]
    if choice == DRILL_TARGET:
        return [
            DeepLinkResource()
            .set_url(launch_url)
            .set_title(_("quizsvc daily drill"))
            .set_custom_params({"quizsvc_target": DRILL_TARGET})
        ]
    if (
        choice == PRACTICE_TARGET
        and kind in problems.KINDS
        and level in {str(n) for n in problems.LEVELS}
    ):
        title = _(
            "quizsvc practice: %(kind)s, level %(level)s",
            kind=KIND_TITLES.get(kind, kind),
            level=level,
        )
        return [
            DeepLinkResource()
            .set_url(launch_url)
            .set_title(title)
            .set_custom_params(
                {
                    "quizsvc_target": PRACTICE_TARGET,
                    "quizsvc_kind": kind,
                    "quizsvc_level": level,
                }
            )
        ]
    return None


@bp.post("/deep-link/choose")
@login_required
def deep_link_respond():
    """Sign the chosen content item and send it back to the LMS."""
    pending = _deep_link_request()
    resources = deep_link_resources(
        request.form.get("choice", ""),
        request.form.get("kind"),
        request.form.get("level"),
    )
    if resources is None:
        flash(_("Choose the daily drill, or a kind and a level."), "error")
        return redirect(url_for("lti.deep_link_choose"))
    db = get_session()
    platform = platforms.find_platform(db, pending["iss"], pending["client_id"])
    if platform is None:
        return _refused(
            LaunchRefused("unknown_platform", "removed during deep linking")
        )
    deep_link = launch.deep_link(
        platforms.registration(platform, instance_folder()),
        pending["deployment_id"],
        {"deep_link_return_url": pending["return_url"], "data": pending.get("data")},
    )
    session.pop(DEEP_LINK_KEY, None)
    g.lti_form_action = platforms.origin(pending["return_url"])
    return render_template(
        "lti/deep_link_return.html",
        return_url=pending["return_url"],
        jwt=deep_link.get_response_jwt(resources),
        titles=[resource.get_title() for resource in resources],
    )
