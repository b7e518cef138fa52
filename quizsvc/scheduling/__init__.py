"""Scheduling policy: what to review when, and how good the schedule is.

Pure computation, no database or web code: NumPy, the standard library, py-fsrs
(FSRS-6 card transitions) and, imported only when fitting, fsrs-rs-python.
`quizsvc.services` feeds it rows and stores what it returns. One module per
concern, every name importable from `quizsvc.scheduling` as before:

- `cards`: card transitions. `review_card(card, rating, now, ...)` runs py-fsrs
  with learning steps of 1 and 10 minutes and a relearning step of 10 minutes.
  Fuzz is on, drawn from a seed (`fuzz_seed(card_id, reps)`) instead of the
  global random state, so replaying a card's log reproduces its schedule exactly.
- `rating`: the rating policy (README "Scheduling"). `rate_graded_answer` turns
  an auto-graded answer into Again/Hard/Good/Easy; `rate_recall` reads a
  learner's own rating of a recall item (four buttons, or Pass/Fail in
  two-button mode).
- `day_queue`: the daily queue. `learner_day` finds the learner's day from their
  time zone and rollover hour; `build_queue` picks due reviews (lowest
  retrievability first), then new items (unlocked lessons, skill order, skills
  staggered), within the day's limits, and never puts two items of one skill
  back to back when it can avoid it, counting the latest answers too.
- `retrievability`: recall probability of many cards at once.
  `retrievability_at` (from last-review times) and `retrievability_many` (from
  elapsed days), NumPy, equal to py-fsrs `Scheduler.get_card_retrievability`
  card by card.
- `evaluation`: review logs (`parse_review_log`, `Histories`) and Anki's SM-2
  (`sm2_intervals`, `sm2_predictions`) as a baseline.
- FSRS parameters (docs/scheduling.md): `fitting` (seeded fsrs-rs fits, their
  mean, blends), `metrics` (log loss, RMSE(bins), AUC, the card-clustered
  bootstrap), `comparison` (rolling and 80/20 evaluation of every method, the
  adoption rule), `cold_start` (class prior vs defaults for new learners).
"""

from quizsvc.scheduling.cards import (
    DEFAULT_DESIRED_RETENTION,
    DEFAULT_PARAMETERS,
    LEARNING_STEPS,
    MAXIMUM_INTERVAL_DAYS,
    RELEARNING_STEPS,
    STATE_LEARNING,
    STATE_NEW,
    STATE_RELEARNING,
    STATE_REVIEW,
    CardState,
    Rating,
    _as_utc,
    check_parameters,
    fuzz_interval_days,
    fuzz_seed,
    replay_card,
    review_card,
)
from quizsvc.scheduling.day_queue import (
    LEARN_AHEAD,
    SKILL_STAGGER,
    STEP_SPACING,
    DueCard,
    LessonProgress,
    NewItem,
    QueueEntry,
    build_queue,
    introduction_order,
    learner_day,
    next_ready,
    spread_skills,
    unlocked_lessons,
)
from quizsvc.scheduling.evaluation import (
    MIN_REVIEWS_TO_OPTIMIZE,
    REVIEW_LOG_COLUMNS,
    SM2_EASY_BONUS,
    SM2_EASY_INTERVAL,
    SM2_GRADUATING_INTERVAL,
    SM2_HARD_FACTOR,
    SM2_LEARNING_STEPS,
    SM2_MINIMUM_EASE,
    SM2_RELEARNING_STEPS,
    Histories,
    LoggedReview,
    _Sm2,
    _sm2_step,
    _Target,
    parse_review_log,
    sm2_intervals,
    sm2_predictions,
)
from quizsvc.scheduling.rating import (
    MIN_TIMED_ANSWERS,
    RECALL_CHOICES,
    TWO_BUTTON_CHOICES,
    GradedAnswer,
    needs_typical_duration,
    rate_graded_answer,
    rate_recall,
    typical_duration_ms,
)
from quizsvc.scheduling.retrievability import (
    DAY_MICROSECONDS,
    decay_of,
    elapsed_days,
    retrievability_at,
    retrievability_many,
    to_datetime64,
)

__all__ = [
    "CardState",
    "DAY_MICROSECONDS",
    "DEFAULT_DESIRED_RETENTION",
    "DEFAULT_PARAMETERS",
    "DueCard",
    "GradedAnswer",
    "Histories",
    "LEARNING_STEPS",
    "LEARN_AHEAD",
    "STEP_SPACING",
    "next_ready",
    "LessonProgress",
    "LoggedReview",
    "MAXIMUM_INTERVAL_DAYS",
    "MIN_REVIEWS_TO_OPTIMIZE",
    "MIN_TIMED_ANSWERS",
    "NewItem",
    "QueueEntry",
    "RECALL_CHOICES",
    "RELEARNING_STEPS",
    "REVIEW_LOG_COLUMNS",
    "Rating",
    "SKILL_STAGGER",
    "SM2_EASY_BONUS",
    "SM2_EASY_INTERVAL",
    "SM2_GRADUATING_INTERVAL",
    "SM2_HARD_FACTOR",
    "SM2_LEARNING_STEPS",
    "SM2_MINIMUM_EASE",
    "SM2_RELEARNING_STEPS",
    "STATE_LEARNING",
    "STATE_NEW",
    "STATE_RELEARNING",
    "STATE_REVIEW",
    "TWO_BUTTON_CHOICES",
    "_Sm2",
    "_Target",
    "_as_utc",
    "_sm2_step",
    "build_queue",
    "check_parameters",
    "decay_of",
    "elapsed_days",
    "fuzz_interval_days",
    "fuzz_seed",
    "introduction_order",
    "learner_day",
    "needs_typical_duration",
    "parse_review_log",
    "rate_graded_answer",
    "rate_recall",
    "replay_card",
    "retrievability_at",
    "retrievability_many",
    "review_card",
    "sm2_intervals",
    "sm2_predictions",
    "spread_skills",
    "to_datetime64",
    "typical_duration_ms",
    "unlocked_lessons",
]
