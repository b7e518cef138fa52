"""State-changing and reporting functions over the database, for views and commands.

Every function takes a SQLAlchemy `Session` first, may `flush()`, and never
commits: the caller commits once per request or command (see quizsvc.db).
Times are timezone-aware; `now=None` means the current UTC time. Bad input
raises a `ServiceError` subclass (quizsvc.services.errors) whose `code` suits
the JSON error contract and whose message is a msgid the edges translate.

- errors: `ServiceError`, `NotFound`, `InvalidInput`, `Conflict` (codes,
  statuses, msgids; see quizsvc.errors).
- users: `create_user(session, username, *, role="learner", ...) -> User`,
  `find_user(session, username) -> User | None`.
- accounts: `register`, `authenticate`, `check_password_rules`, server-side
  sessions (`start_session`, `end_sessions`, `user_for_session`),
  `change_password`, personal tokens (`issue_token`, `list_tokens`,
  `revoke_token`, `user_for_token`).
- settings: `load_settings(session, user) -> LearnerSettings` (stored or
  defaults, not added), `get_or_create_settings(session, user)`,
  `update_settings(session, user, **changes)`.
- bank_sync: `sync_bank(session, bank, *, now=None) -> SyncReport`.
- queue: `build_daily_queue(session, user, now=None) -> list[QueueEntry]`.
- drill: `submit_answer(session, user, item_id, *, answer=None, rating=None,
  duration_ms=None, idempotency_key=None, now=None) -> Submission`, the one
  way an answer is recorded (grades, stores, replays a retried key).
- reviews: `lock_learner(session, user)` (serializes one learner's drill
  writes), `find_answer(session, user, key)`, `store_answer(session, user,
  item, ...)` (what submit_answer stores with),
  `record_explanation(session, user, review_id, text, *, now=None)`,
  `open_item(session, user, item_id, *, problem_kind=None, problem_seed=None,
  problem_level=None, day_position=None, day_total=None, now=None,
  replace=True)`, `get_open_item(session, user)`.
- self_assessments: `record_self_assessment(session, user, skill_id, level, *,
  note=None, now=None) -> SelfAssessment` (appended; the history is kept).
- progress: `card_retrievability(session, user_ids, now=None) -> CardRetrievability`
  (parallel arrays for a whole class), `skill_progress(session, user, now=None)
  -> list[SkillProgress]` (mean recall and latest self-rating per skill).
- parameters: `current_parameters(session, user) -> tuple[float, ...]`,
  `learner_histories(session, user) -> scheduling.Histories`,
  `optimize_learner(session, user, *, now=None, min_reviews=400)
  -> OptimizationResult`, `reschedule_learner(session, user, parameters) -> int`.
- classes: `class_for_teacher(session, user, class_id) -> Classroom | None` (the
  access rule: teachers of the class and admins), `class_learners(session,
  classroom) -> list[Membership]`, `create_class`, `join_class`, `leave_class`,
  `rotate_join_code`, `add_co_teacher`, ...
- rosters: `parse_roster`, `import_roster`, `roster_entries` (also importable
  from classes).
- class_reports (a package, one module per dashboard tab): `class_overview`,
  `class_misconceptions`, `class_items`, `class_explanations`,
  `class_calibration` (set-based over a class's learners).
- demo: `seed_demo_data(engine, *, learners, reviews, ...) -> DemoSummary`
  (bulk, commits in chunks: for benchmarks and demos, not for requests).
"""

from __future__ import annotations

from datetime import UTC, datetime

from quizsvc.services.errors import N_, Conflict, InvalidInput, NotFound, ServiceError

__all__ = ["Conflict", "InvalidInput", "NotFound", "ServiceError", "resolve_now"]


def resolve_now(now: datetime | None) -> datetime:
    """Return `now` in UTC (the current time when None); refuse naive datetimes."""
    if now is None:
        return datetime.now(UTC)
    if now.tzinfo is None or now.utcoffset() is None:
        raise InvalidInput(
            N_("The time %(time)s is naive: pass a timezone-aware one."),
            time=repr(now),
        )
    return now.astimezone(UTC)
