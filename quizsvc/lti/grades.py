"""Grades back to the LMS (LTI Assignment and Grade Services): pushes and their log.

A class has one line item in its course (found by its tag, else created, and
remembered). A push scores every learner with the teacher's rule, skips the
scores the platform already acknowledged (unchanged), and sends the rest one
by one, `userId` = the learner's LTI `sub`:

- 401, 403, 429, 5xx and no answer are retried with backoff (a 401 first
  drops the cached access token; a 429's Retry-After is honoured, capped);
  what still fails is logged with the platform's status and sent again by
  the next push, since only an acknowledged score is recorded as sent;
- each acknowledged score is committed at once (the caller's `commit`), so a
  push that dies half-way resends nothing that arrived: never lost, never
  doubled.

The push and each score sent or failed are the push log teachers read.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

from pylti1p3.assignments_grades import AssignmentsGradesService
from pylti1p3.exception import LtiException, LtiServiceException
from pylti1p3.grade import Grade
from pylti1p3.lineitem import LineItem
from requests import RequestException
from sqlalchemy import select, update
from sqlalchemy.orm import Session

from quizsvc.lti import accounts, scores
from quizsvc.lti.roster import PlatformUnavailable
from quizsvc.lti.services import MemoryTokenConnector, connector_for
from quizsvc.models import Classroom
from quizsvc.models.lti import LtiContext, LtiGradePush, LtiScore, LtiScoreSend
from quizsvc.services import resolve_now
from quizsvc.services.errors import N_, Conflict, InvalidInput, Message

SCORE_SCOPE = "https://purl.imsglobal.org/spec/lti-ags/scope/score"
LINEITEM_SCOPE = "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem"
# Seconds to wait before each retry; the attempts are one more than these.
DEFAULT_RETRY_DELAYS = (1.0, 2.0, 4.0, 8.0)
MAX_RETRY_AFTER = 30.0
RETRIED_STATUSES = frozenset({401, 403, 429})
# A running push not heard from for this long died with its process.
STALL_AFTER = timedelta(minutes=5)
# Scores are compared at the precision they are sent with.
PRECISION = 2


def lineitem_tag(classroom_id: int) -> str:
    """The tag quizsvc gives a class's line item in the LMS."""
    return f"quizsvc-class-{classroom_id}"


def retryable(status: int | None) -> bool:
    """True for the answers worth another try: no answer, 401/403/429, 5xx."""
    return status is None or status in RETRIED_STATUSES or status >= 500


@dataclass(frozen=True)
class Pending:
    """A score to send."""

    user_id: int
    sub: str
    score: float


@dataclass(frozen=True)
class Attempted:
    """How sending one score went."""

    ok: bool
    attempts: int
    status: int | None
    detail: str | None


class AgsClient:
    """The AGS calls for one course, through pylti1p3."""

    def __init__(
        self,
        connector: MemoryTokenConnector,
        context: LtiContext,
        *,
        delays: Sequence[float] = DEFAULT_RETRY_DELAYS,
        sleep: Callable[[float], None] = time.sleep,
    ):
        self.connector = connector
        self.context = context
        self.delays = tuple(delays)
        self.sleep = sleep
        self.service = AssignmentsGradesService(
            connector,
            {
                "scope": list(context.ags_scopes or []),
                "lineitems": context.lineitems_url or "",
            },
        )

    def ensure_lineitem(self, classroom: Classroom) -> str:
        """The URL of the class's line item, found by tag or created."""
        if self.context.lineitem_url:
            return self.context.lineitem_url
        wanted = (
            LineItem()
            .set_tag(lineitem_tag(classroom.id))
            .set_resource_id(lineitem_tag(classroom.id))
            .set_label(f"quizsvc: {classroom.name}"[:100])
            .set_score_maximum(scores.SCORE_MAXIMUM)
        )
        found = self._with_retries(
            lambda: self.service.find_or_create_lineitem(wanted, find_by="tag")
        )
        if not found.ok:
            raise PlatformUnavailable(
                N_(
                    "The LMS did not find or create the grade column "
                    "(%(status)s: %(detail)s)."
                ),
                status=found.status or Message(N_("no answer")),
                detail=found.detail,
            )
        url = found.value.get_id()  # type: ignore[attr-defined]
        if not url:
            raise PlatformUnavailable(N_("The LMS's grade column has no URL."))
        self.context.lineitem_url = url
        return url

    def put_score(self, pending: Pending, lineitem_url: str) -> Attempted:
        """Send one score, retrying what is worth retrying."""
        grade = (
            Grade()
            .set_score_given(pending.score)
            .set_score_maximum(scores.SCORE_MAXIMUM)
            .set_activity_progress("Completed")
            .set_grading_progress("FullyGraded")
            .set_user_id(pending.sub)
        )

        def send():
            # Each attempt carries its own time: platforms keep the newest.
            grade.set_timestamp(datetime.now(UTC).isoformat(timespec="milliseconds"))
            return self.service.put_grade(grade, LineItem().set_id(lineitem_url))

        return self._with_retries(send)

    def _with_retries(self, call) -> _Result:
        attempts = 0
        while True:
            attempts += 1
            status, detail, retry_after = None, None, None
            try:
                return _Result(True, attempts, 200, None, call())
            except LtiServiceException as exc:
                status = exc.response.status_code
                detail = _reason(exc.response)
                retry_after = _retry_after(exc.response)
            except RequestException as exc:
                detail = type(exc).__name__
            except LtiException as exc:
                return _Result(False, attempts, None, str(exc)[:200], None)
            if not retryable(status) or attempts > len(self.delays):
                return _Result(False, attempts, status, detail, None)
            if status == 401:
                self.connector.forget_token(list(self.context.ags_scopes or []))
            delay = self.delays[attempts - 1]
            if retry_after is not None:
                delay = max(delay, min(retry_after, MAX_RETRY_AFTER))
            self.sleep(delay)


@dataclass(frozen=True)
class _Result(Attempted):
    value: object = None


def _reason(response) -> str:
    text = (response.text or "").strip().replace("\n", " ")
    return f"HTTP {response.status_code}" + (f": {text[:150]}" if text else "")


def _retry_after(response) -> float | None:
    value = response.headers.get("Retry-After")
    try:
        return max(float(value), 0.0) if value is not None else None
    except ValueError:
        return None


# --- pushes -----------------------------------------------------------------------


def check_rule(rule: str) -> str:
    """Return a known rule name, else InvalidInput naming the choices."""
    if rule not in scores.RULES:
        raise InvalidInput(
            N_("unknown score rule '%(rule)s': choose %(rules)s"),
            rule=rule,
            rules=list(scores.RULES),
            field="rule",
        )
    return rule


def running_push(
    session: Session, context: LtiContext, *, now: datetime | None = None
) -> LtiGradePush | None:
    """The course's push in progress (a stalled one is marked failed instead)."""
    now = resolve_now(now)
    push = session.scalar(
        select(LtiGradePush).where(
            LtiGradePush.context_id == context.id, LtiGradePush.status == "running"
        )
    )
    if push is not None and push.updated_at < now - STALL_AFTER:
        push.status = "failed"
        push.finished_at = now
        push.message = "stalled: the push stopped without finishing"
        session.flush()
        return None
    return push


def start_push(
    session: Session,
    context: LtiContext,
    rule: str,
    *,
    started_by: int | None,
    now: datetime | None = None,
) -> LtiGradePush:
    """Open a push of the class's scores (one at a time per course)."""
    check_rule(rule)
    now = resolve_now(now)
    if not context.lineitems_url or SCORE_SCOPE not in (context.ags_scopes or []):
        raise Conflict(
            N_(
                "The course's LMS offers no grade service (AGS); turn on the "
                "Assignment and Grade Services in the LMS's tool settings, then "
                "open quizsvc from the course once."
            )
        )
    busy = running_push(session, context, now=now)
    if busy is not None:
        raise Conflict(
            N_(
                "This class's grades are being sent (push %(push)d, "
                "%(done)d/%(total)d); wait for it to finish."
            ),
            push=busy.id,
            done=busy.done,
            total=busy.total,
        )
    push = LtiGradePush(
        context_id=context.id,
        rule=rule,
        started_by=started_by,
        started_at=now,
        updated_at=now,
        status="running",
    )
    session.add(push)
    session.flush()
    return push


def plan_push(
    session: Session,
    push: LtiGradePush,
    *,
    retention_date: date | None = None,
    now: datetime | None = None,
) -> list[Pending]:
    """Score the class and return the changed scores to send; count the rest."""
    context = session.get(LtiContext, push.context_id)
    classroom = session.get(Classroom, context.class_id)
    computed = scores.learner_scores(
        session, classroom, push.rule, retention_date=retention_date, now=now
    )
    subs, without_account = accounts.class_learner_subs(session, context)
    acknowledged = dict(
        session.execute(
            select(LtiScore.user_id, LtiScore.score).where(
                LtiScore.context_id == context.id
            )
        ).all()
    )
    pending, unchanged = [], 0
    for user_id, sub in subs.items():
        score = round(computed.get(user_id, 0.0), PRECISION)
        if acknowledged.get(user_id) == score:
            unchanged += 1
        else:
            pending.append(Pending(user_id, sub, score))
    push.total = len(pending) + unchanged
    push.unchanged = unchanged
    push.done = unchanged
    push.skipped = without_account
    push.updated_at = resolve_now(now)
    session.flush()
    return pending


def record_send(
    session: Session,
    push: LtiGradePush,
    pending: Pending,
    outcome: Attempted,
    *,
    now: datetime | None = None,
) -> LtiScoreSend:
    """Log one score's outcome; an acknowledged one becomes the unchanged mark."""
    now = resolve_now(now)
    line = LtiScoreSend(
        push_id=push.id,
        user_id=pending.user_id,
        sub=pending.sub,
        score=pending.score,
        status="sent" if outcome.ok else "failed",
        attempts=outcome.attempts,
        http_status=outcome.status,
        detail=outcome.detail,
        at=now,
    )
    session.add(line)
    if outcome.ok:
        stored = session.get(LtiScore, (push.context_id, pending.user_id))
        if stored is None:
            session.add(
                LtiScore(
                    context_id=push.context_id,
                    user_id=pending.user_id,
                    score=pending.score,
                    acknowledged_at=now,
                )
            )
        else:
            stored.score, stored.acknowledged_at = pending.score, now
    session.execute(
        update(LtiGradePush)
        .where(LtiGradePush.id == push.id)
        .values(
            done=LtiGradePush.done + 1,
            sent=LtiGradePush.sent + (1 if outcome.ok else 0),
            failed=LtiGradePush.failed + (0 if outcome.ok else 1),
            retried=LtiGradePush.retried + (1 if outcome.attempts > 1 else 0),
            updated_at=now,
        )
    )
    session.flush()
    session.refresh(push)
    return line


def finish_push(
    session: Session,
    push: LtiGradePush,
    *,
    error: str | None = None,
    now: datetime | None = None,
) -> LtiGradePush:
    """Close a push: done (even with failed scores, which the log lists) or failed."""
    now = resolve_now(now)
    push.status = "failed" if error else "done"
    push.message = error
    push.finished_at = push.updated_at = now
    session.flush()
    return push


def run_push(
    session: Session,
    push: LtiGradePush,
    instance_path: str,
    *,
    commit: Callable[[], None],
    progress: Callable[[LtiGradePush], None] = lambda push: None,
    retention_date: date | None = None,
    delays: Sequence[float] = DEFAULT_RETRY_DELAYS,
    sleep: Callable[[float], None] = time.sleep,
) -> LtiGradePush:
    """Plan and send a push, committing after each score (`commit` is the caller's)."""
    try:
        context = session.get(LtiContext, push.context_id)
        classroom = session.get(Classroom, context.class_id)
        pending = plan_push(session, push, retention_date=retention_date)
        client = AgsClient(
            connector_for(session, context, instance_path),
            context,
            delays=delays,
            sleep=sleep,
        )
        lineitem = client.ensure_lineitem(classroom) if pending else None
        commit()
        progress(push)
        for item in pending:
            outcome = client.put_score(item, lineitem)
            if outcome.status == 404:
                # The line item was deleted in the LMS: the next push makes one.
                context.lineitem_url = None
            record_send(session, push, item, outcome)
            commit()
            progress(push)
    except (PlatformUnavailable, Conflict) as exc:
        session.rollback()
        finish_push(session, push, error=str(exc))
        commit()
        return push
    except Exception:
        session.rollback()
        finish_push(session, push, error="internal error (see the server's log)")
        commit()
        raise
    finish_push(session, push)
    commit()
    return push


def pushes(
    session: Session, context: LtiContext, limit: int = 20
) -> list[LtiGradePush]:
    """The course's latest pushes, newest first."""
    return list(
        session.scalars(
            select(LtiGradePush)
            .where(LtiGradePush.context_id == context.id)
            .order_by(LtiGradePush.started_at.desc(), LtiGradePush.id.desc())
            .limit(limit)
        )
    )
