"""The daily drill and the lesson notes over JSON."""

from __future__ import annotations

from typing import Any

from quizsvc.api import bp, id_field, json_body, login_required
from quizsvc.bank_source import get_bank
from quizsvc.db import commits_without_flush, get_session, transaction
from quizsvc.errors import N_, BadRequest, Conflict, Locked, NotFound
from quizsvc.grading import MISCONCEPTIONS
from quizsvc.http.drill import current_drill_step
from quizsvc.http.login import current_db_user
from quizsvc.i18n import current_language
from quizsvc.services import drill
from quizsvc.services.reviews import MAX_DURATION_MS


def _duration(body: dict[str, Any]) -> int | None:
    value = body.get("duration_ms")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise BadRequest(N_("duration_ms must be a whole number."), field="duration_ms")
    if not 0 <= value <= MAX_DURATION_MS:
        raise BadRequest(
            N_("duration_ms must be a whole number from 0 to %(most)d (one day)."),
            field="duration_ms",
            most=MAX_DURATION_MS,
        )
    return value


@bp.get("/drill/next")
@commits_without_flush
@login_required
def api_drill_next():
    """The open item (opening the next one when none is open), or done."""
    step = current_drill_step()
    if isinstance(step, drill.PendingExplanation):
        raise Conflict(
            N_(
                "Explain your wrong answer first (POST /api/v1/drill/explanation "
                "with review_id %(id)d)."
            ),
            code="explanation_required",
            id=step.review.id,
        )
    if isinstance(step, drill.Done):
        return step.public_dict()
    return step.public_dict(current_language())


@bp.post("/drill/answer")
@login_required
def api_drill_answer():
    """Grade and record an answer to the open item."""
    body = json_body(("item_id",))
    rating = body.get("rating")
    if rating is not None and not isinstance(rating, str):
        raise BadRequest(N_('rating must be a string such as "good".'), field="rating")
    carry_next = body.get("next", True)
    if not isinstance(carry_next, bool):
        raise BadRequest(N_("next must be true or false."), field="next")
    key = body.get("idempotency_key")
    if key is not None and not isinstance(key, str):
        raise BadRequest(
            N_("idempotency_key must be a string."), field="idempotency_key"
        )
    lang = current_language()
    with transaction() as session:
        user = current_db_user()
        submission = drill.submit_answer(
            session,
            user,
            str(body["item_id"]),
            answer=body.get("answer"),
            rating=rating,
            duration_ms=_duration(body),
            idempotency_key=key,
        )
        result = submission.to_dict(lang)
        # The next item rides with a right answer (one request per item),
        # opened in the answer's transaction, so it commits with it. A client
        # that first shows the note sends "next": false (the open item's note
        # is closed). After a wrong answer nothing opens: the learner explains
        # and may reread the lesson first (the closed-book rule).
        if submission.requires_explanation or not carry_next:
            step = None
        elif submission.replayed:
            step = drill.current_step(session, user)
        else:
            step = drill.open_next_after_answer(session, user, submission.review)
        result["next"] = _step_body(step, lang)
    return result, 200 if submission.replayed else 201


def _step_body(step: drill.DrillStep | None, lang: str) -> dict[str, Any] | None:
    """A drill step as drill/next shows it; None while an answer awaits its
    explanation (drill/next would answer 409)."""
    if step is None or isinstance(step, drill.PendingExplanation):
        return None
    if isinstance(step, drill.Done):
        return step.public_dict()
    return step.public_dict(lang)


@bp.post("/drill/reveal")
@login_required
def api_drill_reveal():
    """Show the model answer of the open recall item, before rating it."""
    body = json_body(("item_id",))
    return drill.reveal_model_answer(
        get_session(), current_db_user(), str(body["item_id"])
    )


@bp.post("/drill/explanation")
@login_required
def api_drill_explanation():
    """Store why a wrong answer was wrong; returns the explanation and note id."""
    body = json_body(("review_id", "text"))
    review_id, text = id_field(body, "review_id"), body["text"]
    if not isinstance(text, str):
        raise BadRequest(N_("text must be a string."), field="text")
    lang = current_language()
    with transaction() as session:
        user = current_db_user()
        explanation = drill.explain(session, user, review_id, text)
        review = explanation.review
        question = drill.question_of(review.item)
    misconception = review.misconception
    described = MISCONCEPTIONS.get(misconception) if misconception else None
    return {
        "review_id": review_id,
        "explanation_id": explanation.id,
        "misconception": misconception,
        "misconception_explanation": described.get(lang) if described else None,
        **drill.reveal(question, lang),
    }, 201


@bp.get("/notes/<note_id>")
@login_required
def api_note(note_id: str):
    """One lesson note; every note is closed (423) while an item is open in
    your drill or a wrong answer waits for its explanation."""
    note = get_bank().notes.get(note_id)
    if note is None:
        raise NotFound(N_("There is no note '%(note)s'."), note=note_id)
    if drill.closed_book(get_session(), current_db_user()):
        raise Locked(
            N_(
                "This note stays closed while its question is open; after a wrong "
                "answer, explain why first, then it opens."
            )
        )
    lang = current_language()
    return {
        "id": note.id,
        "lesson_id": note.lesson_id,
        "title": note.title.get(lang),
        "body": note.body.get(lang),
    }
