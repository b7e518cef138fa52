"""The daily closed-book drill, shared by the web pages and the JSON API.

One item is open at a time. While it is open, its lesson note stays closed;
after a wrong answer the learner first writes why, and only then are the
explanation and the note link shown (the lesson's rule: "不要回看正文。答错后先
解释原因,再重新打开这一课。"). The lock is derived from stored rows, not kept
as extra state: the open item's note, and the note of any wrong review that
has no explanation yet, are locked.

- `preview_step(session, user, now=None)`: the open item, a pending
  explanation, done, or the `PlannedOpening` of the next item (reads only);
  `open_planned(session, user, planned)` then opens it (a write). The edges
  call both through quizsvc.http.drill.current_drill_step; `current_step`
  does the two at once; `open_next_after_answer(session, user, review)` opens
  the next item in a fresh answer's own transaction.
- `submit_answer(session, user, item_id, *, answer=None, rating=None, ...)
  -> Submission`: grade, rate, record (idempotent by key), say what to show.
- `reveal_model_answer(session, user, item_id)`: a recall item's model answer.
- `explain(session, user, review_id, text)`: store why, unlock the explanation.
- `closed_book(session, user)`: an item open or a wrong answer unexplained;
  then every lesson note, the Lab and Explore are closed.

The package is split by concern: `presentation` (what the learner sees),
`opening` (the next item), `answering` (grading and recording), `explanation`
(explaining, model answers, the closed-book lock), `streaks` (day counts).
"""

from quizsvc.item_types import labelled
from quizsvc.services.drill.answering import (
    AnswerFormatError,
    Submission,
    stored_answer,
    stored_verdict,
    submit_answer,
)
from quizsvc.services.drill.explanation import (
    closed_book,
    explain,
    note_state,
    problem_closed,
    reveal_model_answer,
    review_of,
)
from quizsvc.services.drill.opening import (
    PlannedOpening,
    current_step,
    open_next_after_answer,
    open_planned,
    open_step,
    opened_at,
    pending_explanation,
    preview_step,
)
from quizsvc.services.drill.presentation import (
    Done,
    DrillStep,
    OpenDrillItem,
    PendingExplanation,
    problem_of_open,
    question_of,
    redacted,
    reveal,
)
from quizsvc.services.drill.streaks import (
    STREAK_HORIZON_DAYS,
    learning_streak,
    reviewed_today,
)

__all__ = [
    "STREAK_HORIZON_DAYS",
    "AnswerFormatError",
    "Done",
    "DrillStep",
    "OpenDrillItem",
    "PendingExplanation",
    "PlannedOpening",
    "Submission",
    "closed_book",
    "current_step",
    "explain",
    "labelled",
    "learning_streak",
    "note_state",
    "open_next_after_answer",
    "open_planned",
    "open_step",
    "opened_at",
    "pending_explanation",
    "preview_step",
    "problem_of_open",
    "problem_closed",
    "question_of",
    "redacted",
    "reveal",
    "reveal_model_answer",
    "review_of",
    "reviewed_today",
    "stored_answer",
    "stored_verdict",
    "submit_answer",
]
