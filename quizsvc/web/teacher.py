"""The class dashboard for teachers: /teacher/…

Every class page looks the class up with `require_class_for_teacher`, which
answers 404 when the caller does not teach it (so other classes' ids reveal
nothing); the class list needs a teacher or admin account (403). Figures
come from `quizsvc.services.class_reports`; charts are server-side SVG with
a table beside each, so the pages need no script. Dates are shown in the
class's time zone.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from flask import (
    Blueprint,
    abort,
    flash,
    g,
    redirect,
    render_template,
    request,
    url_for,
)
from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l
from flask_login import login_required

from quizsvc.config import COMMON_TIMEZONES
from quizsvc.db import get_session, transaction
from quizsvc.http.errors import message_of, status_of
from quizsvc.http.login import current_db_user
from quizsvc.i18n import current_language, localized
from quizsvc.models import Classroom, User
from quizsvc.services import InvalidInput, ServiceError, class_reports, insights
from quizsvc.services.classes import (
    can_teach,
    class_learners,
    class_teachers,
    classes_of,
    create_class,
    learner_membership,
    learner_name,
    require_class_for_teacher,
)
from quizsvc.services.errors import N_
from quizsvc.services.grades import (
    DEFAULT_RULE,
    RETENTION_DAYS,
    RULES,
    grade_lesson,
    grade_shares,
    parse_grade_rule,
)
from quizsvc.services.progress import RECALL_HORIZON_DAYS
from quizsvc.services.reset_codes import issue_reset_code
from quizsvc.web.charts import recall_grid_svg
from quizsvc.web.learner_charts import calendar_chart

bp = Blueprint("teacher", __name__, url_prefix="/teacher")

# The overview's columns: (sort key, heading); the first sort is ascending.
OVERVIEW_COLUMNS = (
    ("number", _l("Student number")),
    ("name", _l("Name")),
    ("last_active", _l("Last active")),
    ("streak", _l("Streak")),
    ("reviews_7d", _l("Answers, 7 days")),
    ("reviews_30d", _l("Answers, 30 days")),
    ("overdue", _l("Overdue")),
    ("accuracy", _l("Accuracy")),
    ("recall", _l("Recall in %(days)d days", days=RECALL_HORIZON_DAYS)),
)
# Export buttons on the overview (the routes live in the API's exports module).
EXPORTS = (
    ("reviews", "csv"),
    ("reviews", "xlsx"),
    ("summary", "csv"),
    ("summary", "xlsx"),
    ("xapi", "jsonl"),
    ("workbook", "xlsx"),
)
PROMPT_PREVIEW_CHARS = 90
EXPLANATIONS_PER_PAGE = 20
# Short names for the grader's misconceptions (its texts explain them at length).
MISCONCEPTION_LABELS = {
    "no_scale": _l("Scaling left out"),
    "scale_by_d": _l("Divided by d, not √d"),
    "scale_multiplied": _l("Multiplied by √d"),
    "softmax_over_queries": _l("Softmax down the columns"),
    "no_softmax": _l("Scores used as weights"),
    "unnormalized_exp": _l("exp without normalizing"),
    "mask_ignored": _l("Mask ignored"),
    "mask_after_softmax": _l("Mask applied after softmax"),
    "causal_flipped": _l("Causal mask flipped"),
    "hard_argmax": _l("All weight on the largest score"),
    "transposed": _l("Result transposed"),
    "k_not_transposed": _l("K not transposed"),
}
ITEM_TYPE_LABELS = {
    "choice": _l("choice"),
    "numeric": _l("numeric"),
    "cloze": _l("fill in"),
    "recall": _l("recall"),
    "ordering": _l("ordering"),
    "generated": _l("generated problem"),
}
EXPORT_LABELS = {
    "reviews": _l("Every answer"),
    "summary": _l("Class summary"),
    "canvas": _l("Canvas gradebook"),
    "xapi": _l("xAPI statements"),
    "workbook": _l("Class workbook"),
}


@bp.before_request
@login_required
def _signed_in() -> None:
    """Every teacher page needs a signed-in account (else: the login page)."""


def _teacher() -> User:
    user = current_db_user()
    if not can_teach(user):
        abort(403)
    return user


def _classroom(class_id: int) -> Classroom:
    """The class if the caller teaches it (or is an admin); 404 otherwise."""
    classroom = require_class_for_teacher(get_session(), current_db_user(), class_id)
    g.classroom = classroom
    return classroom


def _period(classroom: Classroom) -> class_reports.Period:
    """The dates asked for; a bad range is said beside the filter (a 400 with
    the page, all dates shown) rather than replacing the page."""
    try:
        return class_reports.parse_period(
            request.args.get("from"), request.args.get("to"), classroom.timezone
        )
    except ServiceError as exc:
        g.period_error = message_of(exc)
        return class_reports.Period(timezone=classroom.timezone)


@bp.after_request
def _bad_period_is_a_400(response):
    if g.get("period_error") and response.status_code == 200:
        response.status_code = 400
    return response


def class_time(moment: datetime | None, zone: str) -> str:
    """A UTC time as a date and minute in the class's time zone."""
    if moment is None:
        return "—"
    return moment.astimezone(ZoneInfo(zone)).strftime("%Y-%m-%d %H:%M")


def percent(value: float | None) -> str:
    """A share as a whole percentage, or a dash when there is none."""
    return "—" if value is None else f"{round(value * 100)}%"


def preview(text: dict | str, limit: int = PROMPT_PREVIEW_CHARS) -> str:
    """A bilingual prompt in the page's language, cut to `limit` characters."""
    shown = localized(text) if text else ""
    return shown if len(shown) <= limit else shown[:limit].rstrip() + "…"


@bp.app_context_processor
def _teacher_helpers() -> dict[str, Any]:
    return {
        "class_time": class_time,
        "percent": percent,
        "preview": preview,
        "misconception_label": lambda code: str(MISCONCEPTION_LABELS.get(code, code)),
        "item_type_label": lambda kind: str(ITEM_TYPE_LABELS.get(kind, kind)),
        "export_label": lambda kind: str(EXPORT_LABELS.get(kind, kind)),
    }


# --- the class list ------------------------------------------------------------


@bp.get("/")
def classes():
    """List the caller's classes, with a form to create one."""
    user = _teacher()
    return render_template(
        "teacher/classes.html",
        listings=classes_of(get_session(), user),
        timezones=COMMON_TIMEZONES,
        form={},
    )


@bp.post("/")
def create():
    """Create a class and open its settings (to share the code)."""
    user = _teacher()
    form = {name: request.form.get(name, "") for name in ("name", "term", "timezone")}
    try:
        with transaction() as session:
            classroom = create_class(
                session,
                user,
                form["name"],
                term=form["term"],
                timezone=form["timezone"] or None,
            )
    except ServiceError as exc:
        return render_template(
            "teacher/classes.html",
            listings=classes_of(get_session(), user),
            timezones=COMMON_TIMEZONES,
            form=form,
            error=message_of(exc),
        ), status_of(exc)
    flash(_("Class created. Share the join code with your learners."), "success")
    return redirect(url_for("teacher.settings", class_id=classroom.id))


# --- overview ------------------------------------------------------------------


@bp.get("/classes/<int:class_id>")
def overview(class_id: int):
    """One row per learner, sortable; recall per skill as a heatmap and a table."""
    classroom = _classroom(class_id)
    period = _period(classroom)
    report = class_reports.class_overview(get_session(), classroom, period=period)
    sort = request.args.get("sort", "number")
    if sort not in class_reports.SORT_KEYS:
        sort = "number"
    descending = request.args.get("order") == "desc"
    rows = class_reports.sort_rows(report.rows, sort, descending)
    names = {row.user_id: row.name for row in report.rows}
    heatmap = report.heatmap
    return render_template(
        "teacher/overview.html",
        classroom=classroom,
        period=period,
        rows=rows,
        sort=sort,
        descending=descending,
        columns=[(key, str(label)) for key, label in OVERVIEW_COLUMNS],
        heatmap=heatmap,
        heatmap_names=[names[user_id] for user_id in heatmap.user_ids],
        heatmap_cells=[
            [
                percent(value) if cards else "—"
                for value, cards in zip(*row, strict=True)
            ]
            for row in zip(heatmap.recall.tolist(), heatmap.cards.tolist(), strict=True)
        ],
        heatmap_svg=recall_grid_svg(
            heatmap.recall,
            row_labels=[names[user_id] for user_id in heatmap.user_ids],
            col_labels=[localized(skill.title) for skill in heatmap.skills],
            col_titles=[localized(skill.title) for skill in heatmap.skills],
            title=_(
                "Recall in %(days)d days per learner and skill",
                days=RECALL_HORIZON_DAYS,
            ),
        )
        if heatmap.user_ids and heatmap.skills
        else None,
        horizon_days=RECALL_HORIZON_DAYS,
        exports=EXPORTS,
        **_grade_view(classroom, period, rows),
    )


def _grade_view(classroom: Classroom, period, rows) -> dict[str, Any]:
    """The grade column by the rule and points asked for (?rule=&points=&
    retention_date=), as the Canvas and gradebook exports will score it."""
    args = request.args
    form = {
        "rule": args.get("rule") or DEFAULT_RULE,
        "points": args.get("points") or "100",
        "retention_date": args.get("retention_date") or "",
        "assignment": args.get("assignment") or "",
    }
    session = get_session()
    retention_default = (
        datetime.now(UTC).astimezone(ZoneInfo(classroom.timezone)).date()
        + timedelta(days=RETENTION_DAYS)
    ).isoformat()
    try:
        rule = parse_grade_rule(
            form["rule"],
            form["retention_date"] if form["rule"] == "retention" else None,
        )
        rule.check_day(classroom.timezone)
        try:
            points = float(form["points"])
        except ValueError:
            points = float("nan")
        if not 0 < points <= 100_000:
            raise InvalidInput(
                N_("points must be more than 0 and at most 100000"), field="points"
            )
        shares = grade_shares(
            session, classroom, rule, grade_lesson(session, None), period=period
        )
    except ServiceError as exc:
        return {
            "grade_form": form,
            "grade_error": message_of(exc),
            "grade_rules": RULES,
            "grades": {},
            "retention_default": retention_default,
        }
    language = "zh-CN" if str(current_language()).startswith("zh") else "en"
    return {
        "grade_form": form,
        "grade_error": None,
        "grade_rules": RULES,
        "grade_title": rule.title(language, classroom.timezone),
        "grades": {
            row.user_id: round(shares.get(row.user_id, 0.0) * points, 1) for row in rows
        },
        "retention_default": retention_default,
    }


# --- misconceptions, items, explanations, calibration --------------------------


@bp.get("/classes/<int:class_id>/misconceptions")
def misconceptions(class_id: int):
    """The classic mistakes named in this class's answers, per skill and learner."""
    classroom = _classroom(class_id)
    period = _period(classroom)
    session = get_session()
    reports = class_reports.class_misconceptions(session, classroom, period=period)
    learners = {m.user_id: learner_name(m) for m in class_learners(session, classroom)}
    skills = {s.id: s for s in class_reports.skills_in_order(session)}
    prompts = insights.item_prompts(
        session, [e.item_id for r in reports for e in r.examples]
    )
    return render_template(
        "teacher/misconceptions.html",
        classroom=classroom,
        period=period,
        reports=reports,
        learners=learners,
        skills=skills,
        prompts=prompts,
    )


@bp.get("/classes/<int:class_id>/items")
def items(class_id: int):
    """Each bank item's attempts, first-try accuracy, lapse rate, median time."""
    classroom = _classroom(class_id)
    period = _period(classroom)
    reports = class_reports.class_items(get_session(), classroom, period=period)
    return render_template(
        "teacher/items.html", classroom=classroom, period=period, reports=reports
    )


@bp.get("/classes/<int:class_id>/explanations")
def explanations(class_id: int):
    """What learners wrote after wrong answers, newest first, 20 a page; by
    learner (?learner=<id>) and only those not yet marked read (?unread=1)."""
    classroom = _classroom(class_id)
    period = _period(classroom)
    session = get_session()
    learners = {m.user_id: learner_name(m) for m in class_learners(session, classroom)}
    learner = request.args.get("learner", type=int)
    if learner not in learners:
        learner = None
    mine = _teacher_membership(classroom)
    unread = request.args.get("unread") == "1"
    after = (mine.explanations_read_at if mine else None) if unread else None
    filters = {"period": period, "user_id": learner, "written_after": after}
    total = class_reports.count_explanations(session, classroom, **filters)
    pages = max(1, -(-total // EXPLANATIONS_PER_PAGE))
    page = min(max(request.args.get("page", 1, type=int) or 1, 1), pages)
    entries = class_reports.class_explanations(
        session,
        classroom,
        **filters,
        limit=EXPLANATIONS_PER_PAGE,
        offset=(page - 1) * EXPLANATIONS_PER_PAGE,
    )
    groups = class_reports.group_by_item(entries)
    args = {**period.query_args()}
    if learner:
        args["learner"] = learner
    if unread:
        args["unread"] = "1"
    return render_template(
        "teacher/explanations.html",
        classroom=classroom,
        period=period,
        groups=groups,
        total=total,
        page=page,
        pages=pages,
        page_args=args,
        learner=learner,
        unread=unread,
        read_at=mine.explanations_read_at if mine else None,
        can_mark_read=mine is not None,
        learners=learners,
        prompts=insights.item_prompts(session, [item for item, _e in groups]),
    )


def _teacher_membership(classroom: Classroom):
    """The caller's teacher membership of the class (None for an admin outside it)."""
    me = current_db_user().id
    return next(
        (m for m in class_teachers(get_session(), classroom) if m.user_id == me), None
    )


@bp.post("/classes/<int:class_id>/explanations/read")
def explanations_read(class_id: int):
    """Mark every explanation written so far as read (for the unread filter)."""
    classroom = _classroom(class_id)
    with transaction():
        mine = _teacher_membership(classroom)
        if mine is not None:
            mine.explanations_read_at = datetime.now(UTC)
    flash(_("All explanations so far are marked read."), "success")
    return redirect(url_for("teacher.explanations", class_id=class_id))


@bp.get("/classes/<int:class_id>/calibration")
def calibration(class_id: int):
    """Each learner's self-rating per skill against measured recall and accuracy."""
    classroom = _classroom(class_id)
    session = get_session()
    report = class_reports.class_calibration(session, classroom)
    learners = {m.user_id: learner_name(m) for m in class_learners(session, classroom)}
    return render_template(
        "teacher/calibration.html",
        classroom=classroom,
        report=report,
        learners=learners,
        counts=report.counts(),
        scale=_self_assessment_labels(),
        horizon_days=RECALL_HORIZON_DAYS,
    )


def _self_assessment_labels() -> dict[int, str]:
    from quizsvc.bank import SELF_ASSESSMENT_SCALE

    lang = current_language()
    return {step["level"]: step[lang] for step in SELF_ASSESSMENT_SCALE}


# --- one learner ---------------------------------------------------------------


@bp.get("/classes/<int:class_id>/learners/<int:user_id>")
def learner(class_id: int, user_id: int):
    """One learner: calendar, skills, recent answers as typed, explanations."""
    classroom = _classroom(class_id)
    membership = learner_membership(get_session(), classroom, user_id)
    if membership is None:
        abort(404)
    return _learner_page(classroom, membership)


@bp.post("/classes/<int:class_id>/learners/<int:user_id>/reset-code")
def reset_code(class_id: int, user_id: int):
    """Issue a one-time password reset code and show it, this once, on the
    learner's page (a newer code replaces an unused older one)."""
    classroom = _classroom(class_id)
    # A refusal (not a learner of this class: 404) is shown by the error pages.
    with transaction() as session:
        issued = issue_reset_code(session, current_db_user(), class_id, user_id)
    membership = learner_membership(get_session(), classroom, user_id)
    return _learner_page(classroom, membership, reset=issued)


def _learner_page(classroom: Classroom, membership, **extra: Any):
    session = get_session()
    user = membership.user
    now = datetime.now(UTC)
    # What the learner shares with the class: from joining on, unless they
    # chose to share their earlier history (quizsvc.services.sharing).
    since = None if membership.share_history else membership.joined_at
    reviews = class_reports.recent_reviews(session, user.id, class_id=classroom.id)
    explanations = class_reports.class_explanations(
        session, classroom, user_id=user.id, limit=50
    )
    return render_template(
        "teacher/learner.html",
        classroom=classroom,
        membership=membership,
        name=learner_name(membership),
        calendar=calendar_chart(
            insights.review_calendar(session, user, now, since=since)
        ),
        records=insights.skill_records(session, user, now, since=since),
        reviews=reviews,
        explanations=explanations,
        prompts=insights.item_prompts(
            session, [r.item_id for r in reviews] + [e.item_id for e in explanations]
        ),
        scale=_self_assessment_labels(),
        horizon_days=RECALL_HORIZON_DAYS,
        **extra,
    )
