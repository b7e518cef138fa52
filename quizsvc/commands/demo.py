"""`quizsvc demo-data`: demo learners with a realistic review history."""

from __future__ import annotations

import click
from flask.cli import with_appcontext


@click.command("demo-data")
@click.option(
    "--learners",
    type=click.IntRange(1, 1_000_000),
    default=20,
    show_default=True,
    help="How many learners to add.",
)
@click.option(
    "--reviews",
    type=click.IntRange(0, 100_000_000),
    default=2_000,
    show_default=True,
    help="How many reviews they share.",
)
@click.option(
    "--prefix",
    default="demo",
    show_default=True,
    help="Usernames are PREFIX-00001, PREFIX-00002, …",
)
@click.option(
    "--days",
    type=click.IntRange(1, 3650),
    default=120,
    show_default=True,
    help="How far back the histories reach.",
)
@click.option(
    "--seed",
    type=int,
    default=0,
    show_default=True,
    help="Random seed: the same seed gives the same histories.",
)
@with_appcontext
def demo_data_command(learners: int, reviews: int, prefix: str, days: int,
                      seed: int) -> None:  # fmt: skip
    """Add demo learners and reviews of the synced items (run `questions sync` first).

    Written in bulk (about a million reviews a minute on SQLite); for demos and
    benchmarks, not for a database with real learners you care about.
    """
    from quizsvc.db import get_engine
    from quizsvc.services import ServiceError
    from quizsvc.services.demo import seed_demo_data

    with click.progressbar(length=reviews, label="writing reviews") as bar:
        try:
            summary = seed_demo_data(
                get_engine(), learners=learners, reviews=reviews, prefix=prefix,
                days=days, seed=seed, progress=bar.update,
            )  # fmt: skip
        except ServiceError as exc:
            raise click.UsageError(str(exc)) from None
    click.echo(
        f"added {summary.learners} learners ({summary.usernames[0]} …), "
        f"{summary.cards} cards and {summary.reviews} reviews"
    )
