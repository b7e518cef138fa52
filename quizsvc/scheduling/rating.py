"""Rating policy (README "Scheduling"): how an answer becomes an FSRS rating.

`rate_graded_answer` turns an auto-graded answer into Again/Hard/Good/Easy;
`rate_recall` reads a learner's own rating of a recall item (four buttons, or
Pass/Fail in two-button mode).
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from quizsvc.scheduling.cards import Rating

# "Fast" needs a baseline: the median of at least this many earlier timed,
# correct answers of the same item type.
MIN_TIMED_ANSWERS = 5


@dataclass(frozen=True)
class GradedAnswer:
    """The outcome of an auto-graded answer."""

    correct: bool
    # 1.0 full credit; between 0 and 1 partial credit.
    score: float = 1.0
    hint_used: bool = False
    # How many tries this answer took (1 = first try).
    attempts: int = 1

    def __post_init__(self) -> None:
        if not 0.0 <= self.score <= 1.0:  # also refuses NaN
            raise ValueError(f"score must be between 0 and 1, got {self.score}")
        if self.attempts < 1:
            raise ValueError(f"attempts must be at least 1, got {self.attempts}")


def typical_duration_ms(
    durations: Iterable[int | None], minimum: int = MIN_TIMED_ANSWERS
) -> float | None:
    """Return the median of the known durations, or None with fewer than `minimum`."""
    known = [d for d in durations if d is not None]
    if len(known) < minimum:
        return None
    return float(statistics.median(known))


def needs_typical_duration(answer: GradedAnswer, duration_ms: int | None) -> bool:
    """Whether the rating of this answer depends on how fast it was."""
    return duration_ms is not None and rate_graded_answer(answer) == Rating.GOOD


def rate_graded_answer(
    answer: GradedAnswer,
    *,
    duration_ms: int | None = None,
    typical_ms: float | None = None,
) -> Rating:
    """Turn an auto-graded answer into an FSRS rating.

    Wrong → Again. Right with partial credit, after a hint or after more than
    one try → Hard. Right on the first try → Good, or Easy when it also took
    less than `typical_ms` (the learner's median time on this item type).
    """
    if not answer.correct:
        return Rating.AGAIN
    if answer.score < 1.0 or answer.hint_used or answer.attempts > 1:
        return Rating.HARD
    fast = (
        typical_ms is not None and duration_ms is not None and duration_ms < typical_ms
    )
    return Rating.EASY if fast else Rating.GOOD


RECALL_CHOICES: Mapping[str, Rating] = {
    "again": Rating.AGAIN,
    "hard": Rating.HARD,
    "good": Rating.GOOD,
    "easy": Rating.EASY,
}
# Pass/Fail are Good/Again; those two names are accepted as well.
TWO_BUTTON_CHOICES: Mapping[str, Rating] = {
    "pass": Rating.GOOD,
    "fail": Rating.AGAIN,
    "good": Rating.GOOD,
    "again": Rating.AGAIN,
}


def rate_recall(choice: str, *, two_button: bool = False) -> Rating:
    """Read a learner's rating of a recall item (again/hard/good/easy, pass/fail)."""
    key = choice.strip().lower()
    allowed = TWO_BUTTON_CHOICES if two_button else RECALL_CHOICES
    if key not in allowed:
        raise ValueError(
            f"unknown rating {choice!r}: expected one of {', '.join(allowed)}"
        )
    return allowed[key]
