"""Seeded random draws that give the same problem on every machine and NumPy.

Only the raw 64-bit output of PCG64 is used: NumPy guarantees that stream for a
given seed, while `Generator.integers` and friends may change their algorithms
between releases. Integers come from the raw words by rejection sampling, so
they are exactly uniform.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import TypeVar

import numpy as np
from numpy.random import PCG64

T = TypeVar("T")

_TWO_64 = 1 << 64


@functools.lru_cache(maxsize=64)
def _limit(span: int) -> int:
    """The largest multiple of `span` not above 2**64: words below it are unbiased."""
    return _TWO_64 - _TWO_64 % span


class Draws:
    """Uniform integers, choices and coin flips from one seeded PCG64 stream."""

    def __init__(self, seed: int):
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
            raise TypeError(f"seed must be an integer, not {type(seed).__name__}")
        if seed < 0:
            raise ValueError(f"seed must be ≥ 0; got {seed}")
        self._bits = PCG64(int(seed))

    def integer(self, low: int, high: int) -> int:
        """Return one integer in [low, high], both ends included."""
        span = high - low + 1
        # Words at or above `limit` would make small values more likely.
        limit = _limit(span)
        while True:
            word = self._bits.random_raw()
            if word < limit:
                return low + word % span

    def integer_list(self, low: int, high: int, count: int) -> list[int]:
        """Return `count` integers in [low, high] as a Python list."""
        span = high - low + 1
        limit = _limit(span)
        # Python integers: for the few entries a problem needs, cheaper than a
        # chain of NumPy calls on a tiny array.
        words = self._bits.random_raw(count).tolist()
        if count and max(words) < limit:  # the usual case: nothing to redraw
            return [low + word % span for word in words]
        # Redraw rejected words in place, in index order, until none is left.
        bad = [i for i, word in enumerate(words) if word >= limit]
        while bad:
            for i, word in zip(
                bad, self._bits.random_raw(len(bad)).tolist(), strict=True
            ):
                words[i] = word
            bad = [i for i in bad if words[i] >= limit]
        return [low + word % span for word in words]

    def skip_integer_lists(self, low: int, high: int, count: int, times: int) -> None:
        """Use up exactly the words `times` calls of `integer_list` would take."""
        total = count * times
        if not total:
            return
        if max(self._bits.random_raw(total).tolist()) >= _limit(high - low + 1):
            # A rejected word is redrawn at once, before the next call's words:
            # step back and take them call by call (about once in 1e17 skips).
            self._bits.advance((1 << 128) - total)
            for _ in range(times):
                self.integer_list(low, high, count)

    def integers(self, low: int, high: int, shape: tuple[int, ...]) -> np.ndarray:
        """Return an int64 array of the given shape, entries in [low, high]."""
        values = self.integer_list(low, high, math.prod(shape))
        return np.array(values, dtype=np.int64).reshape(shape)

    def choice(self, options: Sequence[T]) -> T:
        """Return one of the options, each equally likely."""
        return options[self.integer(0, len(options) - 1)]

    def chance(self, probability: float) -> bool:
        """Return True with the given probability."""
        # 53 random bits make a double in [0, 1) exactly as NumPy does.
        return (self._bits.random_raw() >> 11) * 2.0**-53 < probability

    def sample(self, options: Sequence[T], count: int) -> list[T]:
        """Return `count` distinct options in random order."""
        pool = list(options)
        for i in range(count):
            j = self.integer(i, len(pool) - 1)
            pool[i], pool[j] = pool[j], pool[i]
        return pool[:count]
