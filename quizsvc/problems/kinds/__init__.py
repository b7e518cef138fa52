"""One builder per problem kind: draw the givens, word the prompt, run the pipelines.

A builder returns a `Draft`; `generate` checks that every applicable mistake
gives an answer clearly apart from the correct one and from each other, and
draws again from the same seeded stream when it does not.

The builders live by what they draw: `qkv` (Q, K and V), `given` (given scores
or weights), `sizes` (the scale factor and shapes); `base` holds the levels and
the draws they share.
"""

from __future__ import annotations

from collections.abc import Callable

from quizsvc.problems.draws import Draws
from quizsvc.problems.kinds.base import (
    LABELS,
    LEVEL_SPECS,
    QKV_MISTAKES,
    Draft,
    Level,
    _k_for_kt_unseen,
)
from quizsvc.problems.kinds.given import (
    build_output,
    build_shift_invariance,
    build_softmax_row,
    build_temperature,
    build_uniform,
    build_weights,
)
from quizsvc.problems.kinds.qkv import (
    LESSON_K,
    LESSON_Q,
    LESSON_V,
    build_attention,
    build_causal,
    build_lesson_example,
    build_padding_mask,
    build_scores,
)
from quizsvc.problems.kinds.sizes import (
    AXIS_LABELS,
    SHAPE_NAMES,
    build_scale,
    build_shapes,
)

__all__ = [
    "AXIS_LABELS",
    "BUILDERS",
    "LABELS",
    "LESSON_K",
    "LESSON_Q",
    "LESSON_V",
    "LEVEL_SPECS",
    "QKV_MISTAKES",
    "SHAPE_NAMES",
    "Draft",
    "Level",
    "_k_for_kt_unseen",
]

BUILDERS: dict[str, Callable[[Draws, Level], Draft]] = {
    "scores": build_scores,
    "softmax_row": build_softmax_row,
    "weights": build_weights,
    "output": build_output,
    "attention": build_attention,
    "causal": build_causal,
    "padding_mask": build_padding_mask,
    "shapes": build_shapes,
    "scale": build_scale,
    "temperature": build_temperature,
    "shift_invariance": build_shift_invariance,
    "uniform": build_uniform,
    "lesson_example": build_lesson_example,
}
