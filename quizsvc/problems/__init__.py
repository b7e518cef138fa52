"""Randomized attention problems: `generate(kind, seed, level)` → `Problem`.

The same (kind, seed, level) gives the identical problem everywhere. Each
problem carries the engine's exact answers and, for every classic mistake that
applies to it, the answers that mistake produces; a draw where two of these
would be hard to tell apart is rejected and drawn again, so the grader's
diagnosis always means something. Pure NumPy and standard library.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from quizsvc.problems.draws import Draws
from quizsvc.problems.model import (
    FORMATS,
    Ask,
    Choice,
    Problem,
    answer_to_json,
    tolerance_for,
)
from quizsvc.problems.pipelines import (
    MISCONCEPTION_NAMES,
    RANK,
    Degenerate,
    require_distinct,
)

__all__ = [
    "FORMATS",
    "FRESH_SEED_LIMIT",
    "KINDS",
    "LEVELS",
    "MAX_SEED",
    "MISCONCEPTION_NAMES",
    "Ask",
    "Choice",
    "Problem",
    "ProblemError",
    "answer_to_json",
    "fresh_seed",
    "generate",
    "is_seed",
    "load_problem",
]

LEVELS = (1, 2, 3)

KINDS = {
    "scores": "Compute the scores S = QKᵀ/√d (+ M) from Q, K and an optional mask.",
    "softmax_row": "Turn one row of scores into attention weights.",
    "weights": "Apply the softmax to each row of a score matrix S to get A.",
    "output": "Multiply the weights A by the values V to get O = AV.",
    "attention": "Compute S, A and O from Q, K and V, step by step.",
    "causal": "Attention under a causal mask: which cells are visible, then S, A, O.",
    "padding_mask": "Attention with a key-padding mask; a row that sees no key "
    "is undefined.",
    "shapes": "Shapes of S, A and O in a multi-head layer and what each product "
    "contracts.",
    "scale": "The factor head_dim**−0.5 and the spread √d of a dot product.",
    "temperature": "Weights at two temperatures, and which distribution is sharper.",
    "shift_invariance": "Adding a constant to a row of S leaves its softmax unchanged.",
    "uniform": "Equal scores give weights 1/Tk and the mean of V's rows "
    "(the lesson's exercise).",
    "lesson_example": "The lesson's worked example, step by step (always the same).",
}

# A draw is rejected when two of its pipelines would be told apart only by a
# hair. Most draws pass (about 1.1 draws per problem); the bound only turns a
# builder bug into an error instead of an endless loop.
MAX_DRAWS = 2_000


class ProblemError(ValueError):
    """The kind, seed or level is not one `generate` knows."""


def generate(kind: str, seed: int, level: int = 1) -> Problem:
    """Generate the problem of this kind for this seed and level."""
    if kind not in KINDS:
        raise ProblemError(
            f"unknown problem kind {kind!r}; known kinds: {', '.join(KINDS)}"
        )
    if isinstance(level, bool) or level not in LEVELS:
        raise ProblemError(f"level must be one of {LEVELS}; got {level!r}")
    try:
        draws = Draws(seed)
    except (TypeError, ValueError) as exc:
        raise ProblemError(str(exc)) from None
    builder, spec = BUILDERS[kind], LEVEL_SPECS[level]
    for _ in range(MAX_DRAWS):
        try:
            draft = builder(draws, spec)
            return _finish(kind, int(seed), level, draft)
        except Degenerate:
            continue
    raise RuntimeError(  # pragma: no cover - a bug in a builder's ranges
        f"no usable {kind} problem in {MAX_DRAWS} draws for seed {seed}"
    )


@dataclass(frozen=True)
class _Layout:
    """Where each asked quantity sits when all are laid side by side."""

    asked: frozenset[str]  # the names of the asked quantities
    spans: tuple[tuple[int, int], ...]
    starts: np.ndarray
    margin: np.ndarray
    tolerance: np.ndarray
    transposable: tuple[str, ...]
    # The "transposed" mistake's cells, read from the correct row: cell i of
    # the mirrored row is cell mirror_index[i] of the correct one.
    mirror_index: np.ndarray | None
    # Spans of non-square matrices, whose transpose has another shape: the
    # mirrored row holds 0 there and no answer of the expected shape matches.
    never: tuple[tuple[int, int], ...]


@functools.lru_cache(maxsize=512)
def _layout(signature: tuple, precision: int, transposed: bool) -> _Layout:
    # Ten units of the last decimal: a learner within tolerance of one pipeline
    # can never be within tolerance of another. Choices, shapes and flags are
    # whole numbers: any difference counts.
    unit_margin = 10.0 * 10.0**-precision
    unit_tolerance = tolerance_for(precision)
    margin, tolerance, spans, start = [], [], [], 0
    for _, exact, _, shape in signature:
        size = math.prod(shape)
        margin += [0.5 if exact else unit_margin] * size
        tolerance += [1e-9 if exact else unit_tolerance] * size
        spans.append((start, start + size))
        start += size
    transposable = tuple(n for n, _, t, _ in signature if t) if transposed else ()
    mirror_index, never = None, []
    if transposable:
        mirror = []
        for (name, _, _, shape), (lo, hi) in zip(signature, spans, strict=True):
            cells = np.arange(lo, hi)
            if name in transposable:
                if shape[0] == shape[1]:
                    cells = cells.reshape(shape).T.ravel()
                else:
                    never.append((lo, hi))
            mirror.append(cells)
        mirror_index = np.concatenate(mirror)
    return _Layout(
        frozenset(name for name, *_ in signature),
        tuple(spans),
        np.array([lo for lo, _ in spans]),
        np.array(margin),
        np.array(tolerance),
        transposable,
        mirror_index,
        tuple(never),
    )


@functools.lru_cache(maxsize=512)
def _misconceptions(names: tuple[str, ...], virtual: tuple[str, ...]):
    """The mistakes among these pipelines, in catalog order."""
    found = (n for n in (*names, *virtual) if n != "correct")
    return tuple(sorted(found, key=RANK.__getitem__))


def _finish(kind: str, seed: int, level: int, draft) -> Problem:
    """Check that the mistakes are told apart, then freeze the problem."""
    runs = draft.runs
    values = runs.values
    asks = draft.ask
    names = tuple(runs.names)
    count = len(names)
    layout = _layout(
        tuple(a.layout_key for a in asks),
        draft.precision,
        draft.transposed and "transposed" not in names,
    )

    # One row per pipeline (and the "transposed" mistake last), all asks side
    # by side: the generator checks that all rows differ, and the grader
    # compares an answer with every one of them at once.
    mirrored = layout.mirror_index is not None
    flat = np.empty((count + mirrored, len(layout.margin)))
    np.concatenate(
        [values[a.name].reshape(count, -1) for a in asks], axis=1, out=flat[:count]
    )
    virtual = ()
    if mirrored:
        # The "transposed" mistake: the same numbers, matrices written
        # transposed. A non-square one then has another shape, which an answer
        # of the expected shape never matches (the grader checks the other
        # shape directly), so that row is not checked then.
        virtual = ("transposed",)
        flat[count] = flat[0, layout.mirror_index]
        for lo, hi in layout.never:
            flat[count, lo:hi] = 0.0
    checked = (*names, *virtual) if not layout.never else names
    require_distinct(checked, flat[: len(checked)], layout.margin)
    # A problem's numbers are shared by every grade of it: none may change.
    flat.flags.writeable = False
    stacks = {a.name: values[a.name] for a in asks}
    for array in stacks.values():
        array.flags.writeable = False
    context = dict(draft.context)
    context["rank"] = RANK
    context["grading"] = {
        "asked": layout.asked,
        "flat": flat,
        "starts": layout.starts,
        "spans": layout.spans,
        "cell_tolerance": layout.tolerance,
        "never": list(layout.never),
    }
    context["misconceptions"] = _misconceptions(names, virtual)
    return Problem(
        kind=kind,
        seed=seed,
        level=level,
        given=draft.given,
        ask=asks,
        precision=draft.precision,
        prompt=draft.prompt,
        names=names,
        stacks=stacks,
        virtual=virtual,
        context=context,
    )


# Last: the builders import this package's modules, and KINDS must exist first
# (the question bank reads it without loading the builders' dependencies).
from quizsvc.problems.kinds import BUILDERS, LEVEL_SPECS  # noqa: E402
from quizsvc.problems.permalink import (  # noqa: E402
    FRESH_SEED_LIMIT,
    MAX_SEED,
    fresh_seed,
    is_seed,
    load_problem,
)
