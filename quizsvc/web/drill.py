"""Today, the closed-book drill, its results, and the lesson notes."""

from __future__ import annotations

import math
import uuid
from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo

from flask import Blueprint, abort, flash, redirect, render_template, request, url_for
from flask_babel import gettext as _
from flask_login import login_required

from quizsvc import item_types, scheduling
from quizsvc.bank_source import get_bank
from quizsvc.db import commits_without_flush, get_session, transaction
from quizsvc.http.drill import current_drill_step
from quizsvc.http.errors import message_of, status_of
from quizsvc.http.login import current_db_user
from quizsvc.i18n import current_language
from quizsvc.models import Review
from quizsvc.scheduling import STATE_LEARNING, STATE_RELEARNING
from quizsvc.services import NotFound, ServiceError, drill
from quizsvc.services.queue import build_daily_queue
from quizsvc.services.reviews import (
    MAX_DURATION_MS,
    MAX_EXPLANATION_CHARS,
    MIN_EXPLANATION_CHARS,
    find_answer,
)
from quizsvc.services.settings import load_settings
from quizsvc.web.answer_forms import offending_fields, typed_values
from quizsvc.web.grid import move_paste_into_grid, stored_cell_marks

bp = Blueprint("drill", __name__)
today_bp = Blueprint("today", __name__)

RECALL_RATINGS = ("again", "hard", "good", "easy")
TWO_BUTTON_RATINGS = ("fail", "pass")


@today_bp.get("/today")
@login_required
def today():
    """How many reviews are due, how many new items wait, the streak."""
    session = get_session()
    user = current_db_user()
    now = datetime.now(UTC)
    queue = build_daily_queue(session, user, now)
    counts = {
        "review": sum(e.kind == "review" for e in queue),
        "new": sum(e.kind == "new" for e in queue),
    }
    return render_template(
        "today.html",
        counts=counts,
        streak=drill.learning_streak(session, user, now),
        reviewed=drill.reviewed_today(session, user, now),
        pending=drill.pending_explanation(session, user),
    )


def _render_item(
    step: drill.OpenDrillItem,
    *,
    error: str | None = None,
    values: dict[str, Any] | None = None,
    revealed: dict | None = None,
    invalid: list[str] | None = None,
    status: int = 200,
):
    lang = current_language()
    public = step.public_dict(lang)
    settings = load_settings(get_session(), current_db_user())
    ratings = TWO_BUTTON_RATINGS if settings.two_button_mode else RECALL_RATINGS
    return render_template(
        "drill/item.html",
        step=step,
        item=public,
        error=error,
        values=values or {},
        revealed=revealed,
        invalid=invalid or [],
        ratings=ratings,
        idempotency_key=uuid.uuid4().hex,
    ), status


@bp.get("/drill")
@commits_without_flush
@login_required
def drill_page():
    """Show the open item (opening the next one), a pending explanation, or done."""
    step = current_drill_step()
    if isinstance(step, drill.PendingExplanation):
        return redirect(url_for("drill.result", review_id=step.review.id))
    if isinstance(step, drill.Done):
        return _render_done(step)
    return _render_item(step)


def _render_done(done: drill.Done):
    """The end page: when to come back, in the learner's time zone; while
    learning steps wait for their spacing, a countdown and a self-refresh."""
    zone = ZoneInfo(current_db_user().timezone or "Asia/Shanghai")
    back = done.next_due.astimezone(zone) if done.next_due else None
    wait = None
    if back is not None and not done.day_done:
        wait = max(1, math.ceil((done.next_due - datetime.now(UTC)).total_seconds()))
    return render_template(
        "drill/done.html", done=done, back=back, zone=zone.key, wait_seconds=wait
    )


def _current_open_item() -> drill.OpenDrillItem | None:
    return drill.open_step(get_session(), current_db_user())


@bp.post("/drill/reveal")
@login_required
def reveal():
    """Show a recall item's model answer and ask for the learner's own rating."""
    step = _current_open_item()
    if step is None or step.item.id != request.form.get("item_id"):
        flash(_("That item is no longer open; here is your drill."), "info")
        return redirect(url_for("drill.drill_page"))
    try:
        revealed = drill.reveal_model_answer(
            get_session(), current_db_user(), step.item.id
        )
    except ServiceError as exc:
        return _render_item(step, error=message_of(exc), status=status_of(exc))
    lang = current_language()
    revealed = {
        "model_answer": revealed["model_answer"].get(lang),
        "key_points": [p.get(lang) for p in revealed["key_points"]],
        "attempt": request.form.get("attempt", ""),
    }
    return _render_item(
        step, revealed=revealed, values={"attempt": revealed["attempt"]}
    )


@bp.post("/drill/answer")
@login_required
def answer():
    """Grade the open item; format errors cost nothing and keep what was typed."""
    session = get_session()
    user = current_db_user()
    item_id = request.form.get("item_id", "")
    key = request.form.get("idempotency_key") or None
    if key is not None and len(key) > 128:
        abort(400, description=_("The form was altered; reload the page."))
    step = _current_open_item()
    if step is None or step.item.id != item_id:
        first = find_answer(session, user, key) if key is not None else None
        if first is not None:
            # A double submit (or a retry after a lost response): show the first.
            return redirect(url_for("drill.result", review_id=first.id))
        flash(_("That item is no longer open; here is your drill."), "info")
        return redirect(url_for("drill.drill_page"))
    rating = request.form.get("rating") or None
    answer_value = item_types.of(step.question).read_form(
        step.question, request.form, step.problem
    )
    opened_at = drill.opened_at(session, user)
    duration_ms = None
    if opened_at is not None:
        elapsed = (datetime.now(UTC) - opened_at).total_seconds() * 1000
        duration_ms = int(min(max(elapsed, 0), MAX_DURATION_MS))
    try:
        with transaction():
            submission = drill.submit_answer(
                session,
                user,
                item_id,
                answer=answer_value,
                rating=rating,
                duration_ms=duration_ms,
                idempotency_key=key,
            )
            review_id = submission.review.id
    except ServiceError as exc:
        values = typed_values(request.form)
        values["answer"] = request.form.getlist("answer")
        invalid = None
        if step.problem is not None:
            asks = step.problem.public_dict()["ask"]
            invalid = offending_fields(asks, getattr(exc, "fields", ()), request.form)
        return _render_item(
            step,
            error=message_of(exc),
            values=values,
            invalid=invalid,
            status=status_of(exc),
        )
    return redirect(url_for("drill.result", review_id=review_id))


def _details(review: Review) -> dict[str, Any]:
    """What to show about a stored review: its stored verdict, read through its
    item type (nothing is graded again)."""
    question = drill.question_of(review.item)
    lang = current_language()
    verdict = drill.stored_verdict(review, question)
    details: dict[str, Any] = {
        "question": question,
        "type": question.type,
        "prompt": question.prompt.get(lang),
    }
    details.update(
        item_types.of(question).result_fields(
            question,
            verdict,
            review.answer_text,
            lang,
            problem=drill.problem_of_open(review),
        )
    )
    problem = details.pop("problem_object", None)
    if problem is not None:
        values = _grid_values(details["problem"], details["answers"])
        move_paste_into_grid(problem, details["answers"], values)
        if not review.correct and review.explanation is None:
            # Before the why: the learner's own cells, marked ✓/✗ where the
            # marks give no right value away (never a boolean matrix's).
            verdict = drill.redacted(verdict, problem)
        details.update(grid=values, marks=stored_cell_marks(verdict))
    details.update(drill.reveal(question, lang))
    return details


def _grid_values(public: dict[str, Any], answers: dict[str, Any]) -> dict[str, str]:
    """The learner's stored answers as the form fields Practice's grid shows."""
    values: dict[str, str] = {}
    for ask in public["ask"]:
        name, typed = ask["name"], answers.get(ask["name"])
        if typed is None:
            continue
        if isinstance(typed, list) and ask["format"] in ("matrix", "boolean_matrix"):
            rows = typed if typed and isinstance(typed[0], list) else [typed]
            for i, row in enumerate(rows):
                for j, cell in enumerate(row):
                    if ask["format"] == "boolean_matrix":
                        values[f"cell-{name}-{i}-{j}"] = (
                            "1" if str(cell).strip() in ("1", "1.0", "true") else ""
                        )
                    else:
                        values[f"cell-{name}-{i}-{j}"] = str(cell)
        elif ask["format"] in ("matrix", "boolean_matrix"):
            values[f"paste-{name}"] = str(typed)
        else:
            values[f"answer-{name}"] = str(typed)
    return values


@bp.get("/drill/result/<int:review_id>")
@login_required
def result(review_id: int):
    """What happened to one answer; after a wrong one, first ask why."""
    session = get_session()
    try:
        review = drill.review_of(session, current_db_user(), review_id)
    except NotFound:
        abort(404)
    needs_why = not review.correct and review.explanation is None
    return render_template(
        "drill/result.html",
        review=review,
        needs_why=needs_why,
        details=_details(review),
        comes_back=_comes_back_today(review),
        error=None,
        min_chars=MIN_EXPLANATION_CHARS,
        max_chars=MAX_EXPLANATION_CHARS,
    )


def _comes_back_today(review: Review) -> str | None:
    """When a wrong answer added a learning step for later today (the day's
    total grew by one), the earliest time it comes back, in the learner's zone.
    (A right answer's steps were in the plan, and the total, already.)"""
    if review.correct or review.state_after not in (STATE_LEARNING, STATE_RELEARNING):
        return None
    settings = load_settings(get_session(), current_db_user())
    _start, day_end = scheduling.learner_day(
        review.reviewed_at, settings.timezone, settings.rollover_hour
    )
    if review.due_after >= day_end:
        return None
    return review.due_after.astimezone(ZoneInfo(settings.timezone)).strftime("%H:%M")


@bp.post("/drill/result/<int:review_id>/explain")
@login_required
def explain(review_id: int):
    """Store the learner's reason for a wrong answer, then show the explanation."""
    session = get_session()
    user = current_db_user()
    try:
        review = drill.review_of(session, user, review_id)
    except NotFound:
        abort(404)
    try:
        with transaction():
            drill.explain(session, user, review_id, request.form.get("why", ""))
    except ServiceError as exc:
        return render_template(
            "drill/result.html",
            review=review,
            needs_why=True,
            details=_details(review),
            comes_back=_comes_back_today(review),
            error=message_of(exc),
            why=request.form.get("why", ""),
            min_chars=MIN_EXPLANATION_CHARS,
            max_chars=MAX_EXPLANATION_CHARS,
        ), status_of(exc)
    return redirect(url_for("drill.result", review_id=review_id))


@bp.get("/notes/<note_id>")
@login_required
def note(note_id: str):
    """A lesson note; every note is closed (423) while an item is open in your
    drill or a wrong answer waits for its explanation: the notes of an item's
    other skills, or of a near-duplicate item, hold its answer too."""
    found = get_bank().notes.get(note_id)
    if found is None:
        abort(404)
    if drill.closed_book(get_session(), current_db_user()):
        return render_template("drill/note_locked.html", note=found), 423
    return render_template("drill/note.html", note=found)
