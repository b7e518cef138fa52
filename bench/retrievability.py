"""How much faster is the vectorized retrievability than asking py-fsrs card by card?

The teacher dashboard and exports need the current recall probability of every
card of a class at once. This times `scheduling.retrievability_at` (NumPy)
against a loop over py-fsrs `Scheduler.get_card_retrievability` on the same
cards, checks that they agree, and prints both times and, last, the ratio.
Cards are prepared before timing in the form each side takes: py-fsrs Card
objects for the loop, arrays (as read from the database) for NumPy. The time
to turn Python datetimes into an array is printed separately.

Times are per call, timeit-style: the best of --repeat runs of at least 0.2 s.

Run: .venv/bin/python bench/retrievability.py [--cards 100000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import sys
import timeit
from datetime import UTC, datetime, timedelta
from pathlib import Path

import fsrs
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from quizsvc import scheduling  # noqa: E402

TARGET_SPEEDUP = 50


def per_call(work, repeat: int) -> tuple[float, object]:
    """Seconds per call, timeit-style: the best of `repeat` runs of ≥ 0.2 s each."""
    timer = timeit.Timer(work)
    number, _ = timer.autorange()
    best = min(timer.repeat(repeat=repeat, number=number)) / number
    return best, work()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cards", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    rng = np.random.default_rng(16)
    now = datetime(2026, 11, 30, 12, tzinfo=UTC)
    stability = rng.lognormal(2.0, 1.2, args.cards).clip(0.01, 36500)
    ages = rng.uniform(0, 400 * 86400, args.cards)
    last_reviews = [now - timedelta(seconds=float(a)) for a in ages]
    decay = scheduling.DEFAULT_PARAMETERS[20]

    convert_time, last64 = per_call(
        lambda: scheduling.to_datetime64(last_reviews), args.repeat
    )
    vector_time, got = per_call(
        lambda: scheduling.retrievability_at(stability, last64, now, decay),
        args.repeat,
    )

    scheduler = fsrs.Scheduler()
    cards = [
        fsrs.Card(card_id=i, state=fsrs.State.Review, stability=float(s),
                  difficulty=5.0, due=last, last_review=last)
        for i, (s, last) in enumerate(zip(stability, last_reviews, strict=True))
    ]  # fmt: skip
    loop_time, expected = per_call(
        lambda: [scheduler.get_card_retrievability(card, now) for card in cards],
        args.repeat,
    )
    worst = float(np.max(np.abs(np.asarray(got) - np.asarray(expected))))

    print(f"cards: {args.cards:,} (per call, best of {args.repeat} timeit runs)")
    print(f"py-fsrs loop (get_card_retrievability): {loop_time * 1000:10.2f} ms")
    print(f"vectorized (retrievability_at):         {vector_time * 1000:10.2f} ms")
    print(f"  (+ datetimes → datetime64 once:       {convert_time * 1000:10.2f} ms)")
    print(f"largest difference: {worst:.2e} (must be below 1e-9)")
    print(f"target: at least {TARGET_SPEEDUP}x")
    print(f"speedup: {loop_time / vector_time:.1f}x")
    if worst >= 1e-9:
        sys.exit("the two disagree")


if __name__ == "__main__":
    main()
