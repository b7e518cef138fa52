"""How fast is a generate → grade right → grade wrong cycle, per kind and level?

Two row sets. "misconception": one cycle generates a problem, grades its exact
answer, and grades one wrong answer (a misconception's numbers when the
problem has one; otherwise a perturbed answer). "generic": one cycle does what
the drill does for a problem: generate it, serialize what the learner sees to
JSON, grade the exact answer, grade a generic wrong answer (the right shape
with wrong numbers, matching no known misconception, so the grader searches
every candidate and finds none) and serialize both verdicts to JSON as the
drill stores them. Answers in that set are what a client posts: JSON lists,
with -inf and "undefined" as strings; they are built before the timed window,
since computing them is the client's work, not the server's.

Beside each rate is the rate of one bare `engine.attention()` call on the same
problem, and the ratio: how many bare engine calls one cycle costs. "The same
problem" means the one call that computes its answer without any diagnosis:
its Q, K, V with its mask and causal flag (given scores go in as Q·I with their
-inf cells as the mask; shift_invariance and temperature, whose answers are two
softmaxes, as a batch of two). The "(unmasked)" column is the ratio against a plain
call on the same shapes without any mask, the stricter reading. Rates are per
second of this process's CPU time (one core), measured in alternating slices
of about 20 ms, so other work on the machine affects all columns alike; each
is the median over its slices, and "spread" is the interquartile range of the
cycle rate across slices.

Run: .venv/bin/python bench/problems.py [--seconds 3] [--kinds attention,...]
     [--sets misconception,generic]
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from quizsvc.engine import attention  # noqa: E402
from quizsvc.grading import grade  # noqa: E402
from quizsvc.problems import KINDS, LEVELS, answer_to_json, generate  # noqa: E402

# The targets from the issue: a cycle costs at most this many bare engine
# calls, and level-2 problems run at least this many cycles per second.
MAX_ENGINE_CALLS = 10
MIN_LEVEL2_RATE = 3_000


def engine_call(problem, *, masked: bool = True) -> tuple[tuple, dict]:
    """The arguments of the one engine call that computes this problem's answer."""
    given = problem.given
    if "Q" in given:
        q, k = given["Q"], given["K"]
        v = given["V"] if "V" in given else np.zeros((k.shape[0], 1))
        kwargs: dict = {}
        if masked and "M" in given:
            kwargs["mask"] = given["M"]
        if masked and "key_valid" in given:
            kwargs["mask"] = given["key_valid"].astype(bool)
        if masked and given.get("causal"):
            kwargs["causal"] = True
        return (q, k, v), kwargs
    scores = next((given[n] for n in ("S", "s") if n in given), None)
    if scores is None:  # output, shapes, scale: the shapes they talk about
        weights = given.get("A", np.ones((2, 2)))
        v = given.get("V", np.ones((weights.shape[1], 2)))
        return (weights, np.eye(weights.shape[1]), v), {"scale": 1.0}
    # Two softmaxes make the answer of these kinds: one call on a batch of two.
    if "c" in given:  # shift_invariance: S and S + c
        scores = np.stack([scores, scores + given["c"]])
    elif "tau1" in given:  # temperature: s/τ₁ and s/τ₂
        scores = np.stack([scores / given["tau1"], scores / given["tau2"]])
    hidden = np.isneginf(scores)
    v = given.get("V", np.eye(scores.shape[-1]))
    kwargs = {"scale": 1.0}
    if masked and hidden.any():
        kwargs["mask"] = np.where(hidden, -np.inf, 0.0)
    return (np.where(hidden, 0.0, scores), np.eye(scores.shape[-1]), v), kwargs


def as_submitted(problem, values: dict) -> dict:
    """Answers as a client posts them: arrays for numbers, names for choices."""
    return {
        a.name: answer_to_json(a, values[a.name])
        if a.format in ("choice", "shape")
        else values[a.name]
        for a in problem.ask
    }


def right_answers(problem) -> dict:
    """The exact answers."""
    return as_submitted(problem, problem.answer)


def wrong_answers(problem, turn: int) -> dict:
    """A misconception's answers (rotating), or a perturbed correct answer."""
    names = problem.misconceptions
    if names:
        return as_submitted(problem, problem.pipeline(names[turn % len(names)]))
    values = dict(problem.answer)
    first = problem.ask[0]
    values[first.name] = values[first.name] + 1.0
    return as_submitted(problem, values)


def generic_wrong(problem, seed: int) -> dict:
    """The right shape with wrong numbers that no known mistake produces.

    Each finite cell is moved by 0.3 to 0.9 (seeded), hidden cells (±inf) and
    undefined rows stay as they are, flags and choices stay right, and a shape
    gets each dimension one larger: a learner who knows the layout and the mask
    but whose arithmetic is off. Posted as JSON, as a client sends it.
    """
    rng = np.random.default_rng(seed)
    values = {}
    for ask in problem.ask:
        value = np.asarray(problem.answer[ask.name], dtype=np.float64)
        if ask.format in ("matrix", "number"):
            shift = rng.uniform(0.3, 0.9, value.shape) * rng.choice(
                [-1, 1], value.shape
            )
            value = np.where(np.isfinite(value), value + shift, value)
        elif ask.format == "shape":
            value = value + 1
        values[ask.name] = value
    posted = {a.name: answer_to_json(a, values[a.name]) for a in problem.ask}
    return json.loads(json.dumps(posted))


def posted_right(problem) -> dict:
    """The exact answers as a client posts them (JSON)."""
    posted = {a.name: problem.answer_json(a.name) for a in problem.ask}
    return json.loads(json.dumps(posted))


def drill_cycle(kind: str, level: int, seed: int, right: dict, wrong: dict) -> None:
    """Generate, serialize, grade right and a generic wrong answer, store both."""
    problem = generate(kind, seed, level)
    json.dumps(problem.public_dict("zh-CN"), ensure_ascii=False)
    good = grade(problem, right)
    bad = grade(problem, wrong)
    json.dumps({"type": "generated", **good.to_dict()}, ensure_ascii=False)
    json.dumps({"type": "generated", **bad.to_dict()}, ensure_ascii=False)
    if not good.correct or bad.correct or bad.misconception:  # pragma: no cover
        raise AssertionError(f"{kind} level {level} seed {seed} misgraded")


def one_cycle(kind: str, level: int, seed: int) -> None:
    """Generate a problem, grade its exact answer and one wrong answer."""
    problem = generate(kind, seed, level)
    right = grade(problem, right_answers(problem))
    wrong = grade(problem, wrong_answers(problem, seed))
    if not right.correct or wrong.correct:  # pragma: no cover - a bug
        raise AssertionError(f"{kind} level {level} seed {seed} misgraded")


def measure(
    kind: str, level: int, seconds: float, row_set: str = "misconception"
) -> tuple[float, float, float, float]:
    """Return cycles, same-problem engine calls and plain engine calls per second.

    The three run in alternating slices of about 20 ms of CPU time, so that a
    change in the machine's load affects them alike and their ratios hold.
    Each rate is the median over its slices: a burst of load from a neighbour
    on a shared machine then moves it far less than it moves a mean. The
    fourth figure is the spread of the cycle rate over its slices (the
    interquartile range, as a fraction of the median).
    """
    seeds = itertools.count(1)
    sample = [generate(kind, seed, level) for seed in range(1, 21)]
    same = [engine_call(p) for p in sample]
    plain = [engine_call(p, masked=False) for p in sample]

    # The generic set's answers for a pool of seeds, built before timing.
    pool = []
    if row_set == "generic":
        for seed in range(1, 201):
            problem = generate(kind, seed, level)
            pool.append((seed, posted_right(problem), generic_wrong(problem, seed)))
    turns = itertools.cycle(pool)

    def cycles() -> int:
        if row_set == "generic":
            for _ in range(5):
                drill_cycle(kind, level, *next(turns))
            return 5
        for _ in range(5):
            one_cycle(kind, level, next(seeds))
        return 5

    def calls(which: list) -> int:
        for args, kwargs in which:
            attention(*args, **kwargs)
        return len(which)

    work = {
        "cycles": cycles,
        "same": lambda: calls(same),
        "plain": lambda: calls(plain),
    }
    rates: dict[str, list[float]] = {name: [] for name in work}
    spent = 0.0
    clock = time.process_time
    while spent < seconds:
        for name, run in work.items():
            done = 0
            start = clock()
            while (elapsed := clock() - start) < 0.02:
                done += run()
            rates[name].append(done / elapsed)
            spent += elapsed
    quartiles = statistics.quantiles(rates["cycles"], n=4)
    cycle_rate = statistics.median(rates["cycles"])
    return (
        cycle_rate,
        statistics.median(rates["same"]),
        statistics.median(rates["plain"]),
        (quartiles[2] - quartiles[0]) / cycle_rate,
    )


def stages(kind: str, level: int, seconds: float) -> str:
    """Where a generic cycle's time goes, each stage in bare engine calls.

    Stages and engine calls run in alternating slices, as in `measure`.
    """
    pool = []
    for seed in range(1, 101):
        problem = generate(kind, seed, level)
        right, wrong = posted_right(problem), generic_wrong(problem, seed)
        pool.append(
            (seed, problem, right, wrong, grade(problem, right), grade(problem, wrong))
        )
    same = [engine_call(p) for _, p, *_ in pool]

    def each(step) -> int:
        for item in pool:
            step(*item)
        return len(pool)

    work = {
        "engine": lambda: sum(
            1 for args, kwargs in same if attention(*args, **kwargs) is not None
        ),
        "generate": lambda: each(lambda s, *_: generate(kind, s, level)),
        "problem JSON": lambda: each(
            lambda _s, p, *_: json.dumps(p.public_dict("zh-CN"), ensure_ascii=False)
        ),
        "grade right": lambda: each(lambda _s, p, r, *_: grade(p, r)),
        "grade wrong": lambda: each(lambda _s, p, _r, w, *_: grade(p, w)),
        "verdicts JSON": lambda: each(
            lambda *item: [
                json.dumps({"type": "generated", **v.to_dict()}, ensure_ascii=False)
                for v in item[4:]
            ]
        ),
    }
    rates: dict[str, list[float]] = {name: [] for name in work}
    spent, clock = 0.0, time.process_time
    while spent < seconds:
        for name, run in work.items():
            done, start = 0, clock()
            while (elapsed := clock() - start) < 0.02:
                done += run()
            rates[name].append(done / elapsed)
            spent += elapsed
    engine = statistics.median(rates.pop("engine"))
    parts = [f"{n} {engine / statistics.median(r):.1f}" for n, r in rates.items()]
    return f"{kind:<17} {level:>5}  " + ", ".join(parts)


SET_TITLES = {
    "misconception": "misconception: generate, grade right, grade a known mistake",
    "generic": "generic wrong answer, the drill's cycle: generate, problem to "
    "JSON, grade right and wrong, verdicts to JSON",
}


def row(kind: str, level: int, seconds: float, row_set: str) -> tuple[str, bool]:
    """One printed row, and whether it misses a target."""
    rate, engine, plain, spread = measure(kind, level, seconds, row_set)
    ratio = engine / rate
    notes = []
    if ratio > MAX_ENGINE_CALLS:
        notes.append(f"> {MAX_ENGINE_CALLS} calls")
    if level == 2 and rate < MIN_LEVEL2_RATE:
        notes.append(f"< {MIN_LEVEL2_RATE}/s")
    line = (
        f"{kind:<17} {level:>5} {rate:>9,.0f} {spread:>6.0%} {engine:>9,.0f} "
        f"{ratio:>22.1f} {plain / rate:>10.1f}  {'; '.join(notes) or 'ok'}"
    )
    return line, bool(notes)


def main(argv: list[str] | None = None) -> int:
    """Print the table; return 1 if a target is missed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--seconds",
        type=float,
        default=3.0,
        help="CPU seconds spent measuring each row (default 3)",
    )
    parser.add_argument(
        "--kinds", default=",".join(KINDS), help="comma-separated kinds (default: all)"
    )
    parser.add_argument("--levels", default="1,2,3", help="comma-separated levels")
    parser.add_argument(
        "--sets",
        default="misconception,generic",
        help="row sets: misconception (a known mistake's numbers), generic "
        "(the drill's cycle with a wrong answer no mistake explains)",
    )
    parser.add_argument(
        "--stages",
        action="store_true",
        help="also print, per kind and level, the generic cycle's stages in "
        "engine calls",
    )
    args = parser.parse_args(argv)
    row_sets = [r for r in args.sets.split(",") if r]
    for row_set in row_sets:
        if row_set not in ("misconception", "generic"):
            parser.error(f"unknown row set {row_set!r}")
    kinds = [k for k in args.kinds.split(",") if k]
    levels = [int(x) for x in args.levels.split(",") if x]
    for kind in kinds:
        if kind not in KINDS:
            parser.error(f"unknown kind {kind!r}")
    for level in levels:
        if level not in LEVELS:
            parser.error(f"unknown level {level}")
    print(
        "quizsvc problem cycles (generate + grade right + grade wrong), "
        f"numpy {np.__version__}, pid {os.getpid()}, rates per CPU second"
    )
    header = (
        f"{'kind':<17} {'level':>5} {'cycles/s':>9} {'spread':>6} {'engine/s':>9} "
        f"{'cycle in engine calls':>22} {'(unmasked)':>10}  verdict"
    )
    print(header)
    print("-" * len(header))
    missed = 0
    for row_set in row_sets:
        print(f"\n{SET_TITLES[row_set]}")
        for kind in kinds:
            for level in levels:
                line, miss = row(kind, level, args.seconds, row_set)
                print(line)
                missed += miss
    if args.stages:
        print("\nthe generic cycle's stages, each in bare engine calls")
        for kind in kinds:
            for level in levels:
                print(stages(kind, level, args.seconds))
    print(
        f"\ntargets: a cycle ≤ {MAX_ENGINE_CALLS} bare engine calls; level 2 ≥ "
        f"{MIN_LEVEL2_RATE:,} cycles/s. rows missing a target: {missed}"
    )
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
