"""`quizsvc fsrs …`: fit learners' FSRS parameters and compare schedulers."""

from __future__ import annotations

from pathlib import Path

import click
from flask.cli import with_appcontext
from sqlalchemy import select

from quizsvc import scheduling


@click.group("fsrs")
def fsrs_group() -> None:
    """Fit per-learner FSRS parameters and evaluate schedulers on review logs."""


@fsrs_group.command("optimize")
@click.option("--learner", "username", metavar="NAME", help="One learner's username.")
@click.option("--all", "everyone", is_flag=True, help="Every learner with reviews.")
@click.option(
    "--min-reviews",
    type=click.IntRange(1),
    default=scheduling.MIN_REVIEWS_TO_OPTIMIZE,
    show_default=True,
    help="Skip learners with fewer reviews than this.",
)
@with_appcontext
def optimize_command(username: str | None, everyone: bool, min_reviews: int) -> None:
    """Fit FSRS parameters to learners' reviews; adopt them only if they predict better.

    The fit sees a learner's earlier reviews; both the current and the fitted
    parameters then predict the latest fifth, and the fitted ones are adopted
    (and the learner's cards rescheduled) only if their log loss is lower.
    Each learner is committed on its own, so a long --all run keeps its work.
    """
    from quizsvc.db import get_session, transaction
    from quizsvc.models import Review, User
    from quizsvc.services.parameters import optimize_learner
    from quizsvc.services.users import find_user

    if bool(username) == everyone:
        raise click.UsageError("give either --learner NAME or --all")
    session = get_session()
    if username:
        user = find_user(session, username)
        if user is None:
            raise click.BadParameter(f"no learner {username!r}", param_hint="--learner")
        users = [user]
    else:
        with_reviews = select(Review.user_id).distinct()
        users = list(
            session.scalars(
                select(User).where(User.id.in_(with_reviews)).order_by(User.username)
            )
        )
        if not users:
            click.echo("no learner has reviews yet")
    for user in users:
        with transaction() as session:
            result = optimize_learner(session, user, min_reviews=min_reviews)
        click.echo(result.line())


@fsrs_group.command("evaluate")
@click.option(
    "--csv",
    "csv_path",
    required=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Review log: card_id,review_rating,review_time,review_duration.",
)
@click.option(
    "--test-fraction",
    type=click.FloatRange(0.05, 0.95),
    default=0.2,
    show_default=True,
    help="The latest share of reviews to predict.",
)
def evaluate_command(csv_path: Path, test_fraction: float) -> None:
    """Compare FSRS-6 (default and fitted parameters) with Anki's SM-2 on a log.

    The log is split by time: parameters are fitted on the earlier reviews and
    every model predicts the later ones (those a day or more after the card's
    previous review). Lower log loss and RMSE(bins) are better.
    """
    try:
        with csv_path.open(newline="", encoding="utf-8") as handle:
            log = scheduling.parse_review_log(handle)
        histories = scheduling.Histories.from_log(log)
        evaluation = scheduling.evaluate_models(histories, test_fraction=test_fraction)
    except (ValueError, UnicodeDecodeError) as exc:
        raise click.UsageError(f"{csv_path}: {exc}") from None
    test_count = evaluation.scores["default"].count
    click.echo(
        f"{histories.count} reviews of {len(histories.reviews)} cards; fitted on the "
        f"{evaluation.train_count} before {evaluation.cutoff:%Y-%m-%d %H:%M} UTC, "
        f"scored on the {test_count} after it that came a day or more after the "
        "previous review"
    )
    for label in ("default", "fitted", "SM-2"):
        metrics = evaluation.scores[label]
        click.echo(
            f"{label:<8} log loss {metrics.log_loss:.4f}   "
            f"RMSE(bins) {metrics.rmse_bins:.4f}"
        )
