"""How fast is a generate → grade right → grade wrong cycle, per kind and level?

One cycle generates a problem, grades its exact answer, and grades one wrong
answer (a misconception's numbers when the problem has one, which sends the
grader through its whole misconception search; otherwise a perturbed answer).
Beside each rate is the rate of one bare `engine.attention()` call on the same
shapes, and the ratio: how many bare engine calls one cycle costs. Rates are
per second of this process's CPU time (one core), so other work on the machine
does not distort them.

Run: .venv/bin/python bench/problems.py [--seconds 0.5] [--kinds attention,...]
"""

from __future__ import annotations

import argparse
import itertools
import os
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


def engine_shapes(problem) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Q, K, V with the shapes this problem works on."""
    given = problem.given
    if "Q" in given:
        return given["Q"], given["K"], given["V"] if "V" in given else given["K"]
    matrices = [problem.answer[a.name] for a in problem.ask if a.format == "matrix"]
    tq, tk = matrices[0].shape if matrices else (2, 2)
    dv = given["V"].shape[1] if "V" in given else tk
    return np.ones((tq, tk)), np.ones((tk, tk)), np.ones((tk, dv))


def as_submitted(problem, values: dict) -> dict:
    """Answers as a client posts them: arrays for numbers, names for choices."""
    return {
        a.name: answer_to_json(a, values[a.name]) if a.format in ("choice", "shape")
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


def cycles_per_second(kind: str, level: int, seconds: float) -> tuple[float, int]:
    """Run cycles for about `seconds` and return (cycles/s, cycles run)."""
    seeds = itertools.count(1)
    done = 0
    start = time.process_time()
    deadline = start + seconds
    while time.process_time() < deadline:
        for _ in range(20):
            seed = next(seeds)
            problem = generate(kind, seed, level)
            right = grade(problem, right_answers(problem))
            wrong = grade(problem, wrong_answers(problem, seed))
            if not right.correct or wrong.correct:  # pragma: no cover - a bug
                raise AssertionError(f"{kind} level {level} seed {seed} misgraded")
            done += 1
    return done / (time.process_time() - start), done


def engine_calls_per_second(kind: str, level: int, seconds: float) -> float:
    """Rate of bare attention() calls on the shapes of this kind and level."""
    shapes = [engine_shapes(generate(kind, seed, level)) for seed in range(1, 21)]
    done = 0
    start = time.process_time()
    deadline = start + seconds
    while time.process_time() < deadline:
        for q, k, v in shapes:
            attention(q, k, v)
        done += len(shapes)
    return done / (time.process_time() - start)


def main(argv: list[str] | None = None) -> int:
    """Print the table; return 1 if a target is missed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=0.5,
                        help="time spent measuring each row (default 0.5)")
    parser.add_argument("--kinds", default=",".join(KINDS),
                        help="comma-separated kinds (default: all)")
    parser.add_argument("--levels", default="1,2,3", help="comma-separated levels")
    args = parser.parse_args(argv)
    kinds = [k for k in args.kinds.split(",") if k]
    levels = [int(x) for x in args.levels.split(",") if x]
    print(f"quizsvc problem cycles (generate + grade right + grade wrong), "
          f"numpy {np.__version__}, pid {os.getpid()}")
    header = (f"{'kind':<17} {'level':>5} {'cycles/s':>9} {'engine/s':>9} "
              f"{'cycle in engine calls':>22}  verdict")
    print(header)
    print("-" * len(header))
    missed = 0
    for kind in kinds:
        for level in levels:
            if level not in LEVELS or kind not in KINDS:
                raise SystemExit(f"unknown kind or level: {kind} {level}")
            rate, _ = cycles_per_second(kind, level, args.seconds)
            engine = engine_calls_per_second(kind, level, args.seconds / 2)
            ratio = engine / rate
            notes = []
            if ratio > MAX_ENGINE_CALLS:
                notes.append(f"> {MAX_ENGINE_CALLS} calls")
            if level == 2 and rate < MIN_LEVEL2_RATE:
                notes.append(f"< {MIN_LEVEL2_RATE}/s")
            missed += bool(notes)
            print(f"{kind:<17} {level:>5} {rate:>9,.0f} {engine:>9,.0f} "
                  f"{ratio:>22.1f}  {'; '.join(notes) or 'ok'}")
    print(f"\ntargets: a cycle ≤ {MAX_ENGINE_CALLS} bare engine calls; level 2 ≥ "
          f"{MIN_LEVEL2_RATE:,} cycles/s. rows missing a target: {missed}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
