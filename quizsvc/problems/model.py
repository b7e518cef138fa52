"""The problem a learner sees, and what the grader keeps beside it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from types import MappingProxyType
from typing import Any

import numpy as np

from quizsvc.engine import jsonable

# How an asked quantity is typed in, so the web page can draw the right inputs.
FORMATS = ("matrix", "number", "choice", "shape", "boolean_matrix")

DEFAULT_PRECISION = 4


def tolerance_for(precision: int) -> float:
    """Accept the exact value rounded to `precision` decimals, give or take 2 units."""
    return 2.5 * 10.0**-precision


@dataclass(frozen=True)
class Choice:
    """One option of a choice question."""

    value: str
    label: Mapping[str, str]

    def __post_init__(self) -> None:
        # Asks and choices are shared between problems: keep their text read-only.
        object.__setattr__(self, "label", MappingProxyType(dict(self.label)))

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-serializable view."""
        return {"value": self.value, "label": dict(self.label)}


@dataclass(frozen=True)
class Ask:
    """One quantity the learner must give, with how it is typed.

    `shape` is the answer's shape: [rows, cols] for a matrix (every matrix is
    2-D; a single row such as one query's weights is [1, n], and a learner may
    type it as a row or a column), [] for a number or a choice, and [n] for a
    shape answer made of n integers. `derive` names how this step follows from
    the learner's earlier ones (error carried forward); None when it does not.
    """

    name: str
    format: str
    shape: tuple[int, ...]
    label: Mapping[str, str]
    choices: tuple[Choice, ...] = ()
    derive: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "label", MappingProxyType(dict(self.label)))
        object.__setattr__(self, "shape", tuple(self.shape))
        # What the grader's table layout depends on, worked out once per ask
        # rather than once per generated problem.
        object.__setattr__(
            self, "layout_key", (self.name, self.exact, self.transposable, self.shape)
        )

    @property
    def depends_on(self) -> tuple[str, ...]:
        """The earlier asked quantities this step is computed from."""
        return self.derive[1:] if self.derive else ()

    @property
    def transposable(self) -> bool:
        """True when writing this matrix transposed gives a different answer."""
        return self.format == "matrix" and len(self.shape) == 2 and min(self.shape) > 1

    @property
    def exact(self) -> bool:
        """True when the answer is a whole thing (a choice, a shape, flags)."""
        return self.format in ("choice", "shape", "boolean_matrix")

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-serializable view."""
        out: dict[str, Any] = {
            "name": self.name,
            "format": self.format,
            "shape": list(self.shape),
            "label": dict(self.label),
        }
        if self.choices:
            out["choices"] = [c.to_dict() for c in self.choices]
        if self.depends_on:
            out["depends_on"] = list(self.depends_on)
        return out


@dataclass(frozen=True, eq=False)
class Problem:
    """A generated problem: what is given, what is asked, and the exact answers.

    `names` lists "correct" and every misconception the problem can tell
    apart (catalog order); `stacks[ask][p]` is the value pipeline `names[p]`
    gives for that ask, as a float array in the ask's shape (a choice stored as
    its index, flags as 0/1). `virtual` names mistakes checked directly rather
    than stacked ("transposed": the same numbers in another shape).
    """

    kind: str
    seed: int
    level: int
    given: Mapping[str, Any]
    ask: tuple[Ask, ...]
    precision: int
    prompt: Mapping[str, str]
    names: tuple[str, ...] = field(repr=False)
    stacks: Mapping[str, np.ndarray] = field(repr=False)
    virtual: tuple[str, ...] = field(default=(), repr=False)
    context: Mapping[str, Any] = field(default_factory=dict, repr=False)

    @property
    def answer(self) -> Mapping[str, np.ndarray]:
        """The engine's exact result for each asked quantity."""
        # Cached by hand: functools.cached_property takes a lock on Python 3.11,
        # which costs more than the dictionary it guards.
        cached = self.__dict__.get("_answer")
        if cached is None:
            cached = {name: stack[0, ...] for name, stack in self.stacks.items()}
            self.__dict__["_answer"] = cached
        return cached

    @cached_property
    def pipelines(self) -> Mapping[str, Mapping[str, np.ndarray]]:
        """Every pipeline's answers, "correct" first, then the catalog order."""
        out = {name: self.pipeline(name) for name in (*self.names, *self.virtual)}
        order = self.context.get("rank", {})
        return dict(sorted(out.items(), key=lambda item: order.get(item[0], 0)))

    @property
    def tolerance(self) -> float:
        """The largest accepted distance from an exact number (0: all exact)."""
        # Cached by hand, like `answer`: the grader asks for it many times.
        cached = self.__dict__.get("_tolerance")
        if cached is None:
            exact = all(a.exact for a in self.ask)
            cached = 0.0 if exact else tolerance_for(self.precision)
            self.__dict__["_tolerance"] = cached
        return cached

    @property
    def misconceptions(self) -> tuple[str, ...]:
        """The misconceptions this problem can tell apart, in catalog order."""
        known = self.context.get("misconceptions")
        if known is None:
            order = self.context.get("rank", {})
            found = [n for n in (*self.names, *self.virtual) if n != "correct"]
            known = tuple(sorted(found, key=lambda n: order.get(n, 0)))
        return known

    def pipeline(self, name: str) -> Mapping[str, np.ndarray]:
        """The answers one pipeline ("correct" or a misconception) gives."""
        if name in self.virtual:  # "transposed": the right numbers, transposed
            return {
                a.name: (
                    self.answer[a.name].T if a.transposable else self.answer[a.name]
                )
                for a in self.ask
            }
        row = self.names.index(name)
        return {a: stack[row, ...] for a, stack in self.stacks.items()}

    def asked(self, name: str) -> Ask:
        """Return the ask with this name (KeyError if there is none)."""
        for ask in self.ask:
            if ask.name == name:
                return ask
        raise KeyError(name)

    def answer_json(self, name: str) -> Any:
        """Return the exact answer for one ask as the learner would type it."""
        return answer_to_json(self.asked(name), self.answer[name])

    def public_dict(self, lang: str | None = None) -> dict[str, Any]:
        """Return everything a learner may see before answering (never the answer).

        With `lang`, the prompt and labels are strings in that language.
        """
        out = {
            "kind": self.kind,
            "seed": self.seed,
            "level": self.level,
            "given": {name: jsonable_given(v) for name, v in self.given.items()},
            "ask": [a.to_dict() for a in self.ask],
            "precision": self.precision,
            "tolerance": self.tolerance,
            "prompt": dict(self.prompt),
        }
        if lang is not None:
            out["prompt"] = _pick(self.prompt, lang)
            for ask in out["ask"]:
                ask["label"] = _pick(ask["label"], lang)
                for choice in ask.get("choices", ()):
                    choice["label"] = _pick(choice["label"], lang)
        return out

    def to_dict(self) -> dict[str, Any]:
        """Return the problem with its answers, JSON-serializable."""
        out = self.public_dict()
        out["answer"] = {a.name: self.answer_json(a.name) for a in self.ask}
        return out

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Problem):
            return NotImplemented
        return self.to_dict() == other.to_dict()

    __hash__ = None  # type: ignore[assignment]


def _pick(text: Mapping[str, str], lang: str) -> str:
    return text.get(lang) or text.get("zh-CN") or next(iter(text.values()))


def jsonable_given(value: Any) -> Any:
    """Convert a given value (array, number, flag) to JSON types."""
    if isinstance(value, np.ndarray):
        if np.issubdtype(value.dtype, np.integer) or value.dtype == bool:
            return value.tolist()
        if value.ndim and np.isfinite(value).all():
            # Mostly small whole numbers: one conversion for the whole matrix.
            if (value == np.trunc(value)).all():
                return value.astype(np.int64).tolist()
            return _whole_numbers_as_ints(value.tolist())
        return _whole_numbers_as_ints(jsonable(value))
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return jsonable(value)


def _whole_numbers_as_ints(value: Any) -> Any:
    # Given matrices are mostly small integers; [[1, 0]] reads better than [[1.0, 0.0]].
    if isinstance(value, list):
        return [_whole_numbers_as_ints(x) for x in value]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def answer_to_json(ask: Ask, value: np.ndarray) -> Any:
    """Convert an internal answer value to what a learner would submit."""
    if ask.format == "choice":
        return ask.choices[int(value)].value
    if ask.format == "shape":
        return [int(x) for x in value]
    if ask.format == "boolean_matrix":
        return (np.asarray(value) > 0.5).tolist()
    if ask.format == "number":
        return jsonable(float(value))
    return jsonable(np.asarray(value, dtype=np.float64))
