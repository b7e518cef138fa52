"""A problem's permalink (kind, level, seed): the seeds it may carry, and loading it.

A generated problem is named completely by its kind, level and seed, so a link
or an API id can be checked again by anyone. Seeds drawn for new problems stay
short enough to read in a link; any seed a review's BIGINT column holds opens
a problem.
"""

from __future__ import annotations

import secrets

from quizsvc.problems import KINDS, LEVELS, Problem, ProblemError, generate

# Fresh seeds (the practice page, the API, drills): below 2**31.
FRESH_SEED_LIMIT = 2**31
# The largest seed a permalink or a stored review may name (a signed BIGINT).
MAX_SEED = 2**63 - 1


def fresh_seed() -> int:
    """Draw a seed for a new problem."""
    return secrets.randbelow(FRESH_SEED_LIMIT)


def is_seed(value: object) -> bool:
    """Tell whether `value` is a seed a permalink may carry (0..MAX_SEED)."""
    return (
        isinstance(value, int)
        and not isinstance(value, bool)
        and (0 <= value <= MAX_SEED)
    )


def load_problem(kind: str, level: int, seed: int) -> Problem | None:
    """Generate the problem a permalink names, or None when it names none."""
    if kind not in KINDS or level not in LEVELS or not is_seed(seed):
        return None
    try:
        return generate(kind, seed, level)
    except ProblemError:
        return None
