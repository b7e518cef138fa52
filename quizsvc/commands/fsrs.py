"""`quizsvc fsrs …`: fit learners' and classes' FSRS parameters, compare schedulers."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

import click
from flask.cli import with_appcontext
from sqlalchemy import select

from quizsvc import scheduling
from quizsvc.scheduling.fitting import SEEDS

MIN_SEEDS = 5


def _seeds(_ctx, _param, value: str | None) -> tuple[int, ...]:
    if value is None:
        return SEEDS
    try:
        seeds = tuple(int(part) for part in value.split(",") if part.strip())
    except ValueError:
        raise click.BadParameter("give whole numbers separated by commas") from None
    if len(set(seeds)) < MIN_SEEDS:
        raise click.BadParameter(f"give at least {MIN_SEEDS} different seeds")
    return seeds


def _start(_ctx, _param, value: str | None) -> datetime | None:
    if value is None:
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise click.BadParameter(
            f"{value!r} is not a date (YYYY-MM-DD or ISO 8601)"
        ) from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


seeds_option = click.option(
    "--seeds",
    callback=_seeds,
    metavar="N,N,…",
    help=f"fsrs-rs training seeds, at least {MIN_SEEDS} "
    f"(default {','.join(map(str, SEEDS))}).",
)


@click.group("fsrs")
def fsrs_group() -> None:
    """Fit FSRS parameters (learners, class priors) and evaluate schedulers."""


@fsrs_group.command("optimize")
@click.option("--learner", "username", metavar="NAME", help="One learner's username.")
@click.option(
    "--all", "everyone", is_flag=True, help="Every class prior, then every learner."
)
@click.option(
    "--min-reviews",
    type=click.IntRange(1),
    default=scheduling.MIN_REVIEWS_TO_OPTIMIZE,
    show_default=True,
    help="Leave learners with fewer reviews to the class prior or the defaults.",
)
@click.option(
    "--force", is_flag=True, help="Refit learners tried since their latest review too."
)
@seeds_option
@with_appcontext
def optimize_command(
    username: str | None,
    everyone: bool,
    min_reviews: int,
    force: bool,
    seeds: tuple[int, ...],
) -> None:
    """Fit FSRS parameters; adopt them only when they surely predict better.

    Each learner's whole history is fitted with every seed, the fits averaged
    and blended toward the defaults (or their class prior) by the weight that
    did best on their own rolling weekly evaluation, and adopted only if the
    95% interval of its log loss minus the defaults' lies below 0; otherwise
    the current parameters stay and the line says why. With --all, each
    class's prior is fitted first on its learners' shared reviews. Fitting
    runs outside any write transaction and each learner is committed on its
    own, so the service keeps serving and an interrupted run resumes where it
    stopped (learners tried since their latest review are skipped).
    """
    from quizsvc.db import begin_reading, get_session, transaction
    from quizsvc.models import Classroom, Review, User
    from quizsvc.services.class_priors import fit_class_prior
    from quizsvc.services.optimization import (
        apply_plan,
        needs_optimizing,
        plan_learner,
    )
    from quizsvc.services.users import find_user

    if bool(username) == everyone:
        raise click.UsageError("give either --learner NAME or --all")
    session = get_session()
    if username:
        user = find_user(session, username)
        if user is None:
            raise click.BadParameter(f"no learner {username!r}", param_hint="--learner")
        user_ids = [user.id]
    else:
        # A list first: each class commits on its own, and a commit must not
        # cut the result this loop reads.
        class_ids = list(session.scalars(select(Classroom.id).order_by(Classroom.id)))
        for class_id in class_ids:
            with transaction() as session:
                classroom = session.get(Classroom, class_id)
                click.echo(fit_class_prior(session, classroom, seeds=seeds).line())
        with_reviews = select(Review.user_id).distinct()
        user_ids = list(
            session.scalars(
                select(User.id).where(User.id.in_(with_reviews)).order_by(User.username)
            )
        )
        session.rollback()
        if not user_ids:
            click.echo("no learner has reviews yet")
            return
    lines, skipped = [], 0
    with click.progressbar(user_ids, label="learners", file=sys.stderr) as bar:
        for user_id in bar:
            session = begin_reading()
            user = session.get(User, user_id)
            if everyone and not force and not needs_optimizing(session, user):
                skipped += 1
                session.rollback()
                continue
            plan = plan_learner(session, user, min_reviews=min_reviews, seeds=seeds)
            session.rollback()
            with transaction() as session:
                user = session.get(User, user_id)
                lines.append(apply_plan(session, user, plan).line())
    for line in lines:
        click.echo(line)
    if skipped:
        click.echo(
            f"{skipped} learners skipped: tried since their latest review "
            "(--force refits them)"
        )


def _read_log(path: Path) -> scheduling.Histories:
    try:
        with path.open(newline="", encoding="utf-8") as handle:
            return scheduling.Histories.from_log(scheduling.parse_review_log(handle))
    except (ValueError, UnicodeDecodeError) as exc:
        raise click.UsageError(f"{path}: {exc}") from None


def _class_prior(path: Path | None, seeds: Sequence[int]) -> tuple[float, ...] | None:
    if path is None:
        return None
    from quizsvc.scheduling.fitting import fit_averaged

    try:
        return fit_averaged(_read_log(path), seeds=seeds)
    except ValueError as exc:
        raise click.UsageError(f"{path}: {exc}") from None


log_option = click.option(
    "--csv",
    "csv_path",
    required=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Review log: card_id,review_rating,review_time,review_duration.",
)


@fsrs_group.command("evaluate")
@log_option
@click.option(
    "--rolling",
    is_flag=True,
    help="Refit every week on the history before it (expanding window).",
)
@click.option(
    "--start",
    callback=_start,
    metavar="DATE",
    help="First week of --rolling (default: the median review time).",
)
@click.option(
    "--test-fraction",
    type=click.FloatRange(0.05, 0.95),
    default=0.2,
    show_default=True,
    help="Without --rolling: the latest share of reviews to predict.",
)
@click.option(
    "--class-csv",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="A class's pooled log: its fit is the class_prior method and the "
    "blend target.",
)
@seeds_option
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def evaluate_command(
    csv_path: Path,
    rolling: bool,
    start: datetime | None,
    test_fraction: float,
    class_csv: Path | None,
    seeds: tuple[int, ...],
    as_json: bool,
) -> None:
    """Compare FSRS-6 (defaults, fits, blends, class prior) with SM-2 on a log.

    Every method predicts the same reviews (those a day or more after the
    card's previous one) from parameters fitted only on earlier reviews: with
    --rolling, refitted every week from the median review time (or --start);
    otherwise fitted once on all but the latest fifth. Lower log loss and
    RMSE(bins) and higher AUC are better; the interval is the 95%
    card-clustered bootstrap interval of the log loss minus the defaults'.
    `adopted` is what `quizsvc fsrs optimize` would adopt for this log.
    """
    from quizsvc.scheduling.comparison import compare

    if start is not None and not rolling:
        raise click.UsageError("--start needs --rolling")
    histories = _read_log(csv_path)
    prior = _class_prior(class_csv, seeds)
    try:
        report = compare(
            histories,
            split="rolling" if rolling else "80/20",
            start=start,
            test_fraction=test_fraction,
            seeds=seeds,
            class_prior=prior,
        )
    except ValueError as exc:
        raise click.UsageError(f"{csv_path}: {exc}") from None
    if as_json:
        click.echo(json.dumps(report.as_dict(), indent=2))
        return
    how = (
        f"refitted weekly from {report.first_cutoff:%Y-%m-%d} ({report.segments} weeks)"
        if rolling
        else f"fitted on the reviews before {report.first_cutoff:%Y-%m-%d %H:%M} UTC"
    )
    click.echo(
        f"{histories.count} reviews of {len(histories.reviews)} cards; {how}; "
        f"{report.predicted} reviews predicted; seeds {','.join(map(str, seeds))}"
    )
    click.echo(
        f"{'method':<12} {'log loss':>9} {'RMSE(bins)':>11} {'AUC':>7}   "
        "Δlog loss vs default, 95% interval"
    )
    for name, score in report.scores.items():
        low, high = score.delta_log_loss_ci
        click.echo(
            f"{name:<12} {score.log_loss:>9.4f} {score.rmse_bins:>11.4f} "
            f"{score.auc:>7.4f}   [{low:+.4f}, {high:+.4f}]"
        )
    if prior is None:
        click.echo("class_prior: not scored (give --class-csv, a class's pooled log)")
    click.echo(f"adopted: {report.adopted} ({report.reason})")


@fsrs_group.command("cold-start")
@click.option(
    "--simulated",
    is_flag=True,
    help="A simulated class (learners' parameters drawn around a class mean).",
)
@click.option(
    "--csv",
    "csv_path",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="A real log, its cards split in two: the class and the new learner.",
)
@click.option(
    "--learners",
    type=click.IntRange(3, 200),
    default=20,
    show_default=True,
    help="Simulated learners.",
)
@click.option(
    "--reviews",
    type=click.IntRange(400, 20000),
    default=600,
    show_default=True,
    help="Reviews per simulated learner.",
)
@click.option(
    "--splits",
    type=click.IntRange(1, 100),
    default=10,
    show_default=True,
    help="Random card splits of the real log.",
)
@seeds_option
def cold_start_command(
    simulated: bool,
    csv_path: Path | None,
    learners: int,
    reviews: int,
    splits: int,
    seeds: tuple[int, ...],
) -> None:
    """Score a class prior against the defaults on new learners' first reviews.

    Each learner is left out in turn; the prior (mean of the seeds' fits) is
    fitted on the others' pooled reviews and, like the defaults, predicts the
    learner's first 50, 100, 200 and 400 reviews. With --csv, each random half
    of the log's cards plays the new learner and the other half the class.
    """
    from quizsvc.scheduling import cold_start

    if simulated == (csv_path is not None):
        raise click.UsageError("give either --simulated or --csv FILE")
    if simulated:
        logs = cold_start.simulate_class(learners, reviews=reviews)
        rows = cold_start.cold_start(logs, seeds=seeds)
        click.echo(
            f"simulated class: {learners} learners × {reviews} reviews, parameters "
            f"= class mean × exp(N(0, {cold_start.SPREAD}²)); leave one learner out"
        )
        who = "learners"
    else:
        with csv_path.open(newline="", encoding="utf-8") as handle:
            try:
                log = scheduling.parse_review_log(handle)
            except (ValueError, UnicodeDecodeError) as exc:
                raise click.UsageError(f"{csv_path}: {exc}") from None
        parts = {f"split{k}": cold_start.split_cards(log, k) for k in range(splits)}
        rows = cold_start.cold_start(
            {name: part[1] for name, part in parts.items()},
            pools={name: part[0] for name, part in parts.items()},
            seeds=seeds,
        )
        click.echo(
            f"real log (proxy): {csv_path.name}, cards split in two at random "
            f"{splits} times; one half is the class, the other the new learner"
        )
        who = "splits"
    click.echo(
        f"{'first N':>7} {who:>8} {'predicted':>9} {'default':>8} {'prior':>8}   "
        "Δ (prior − default), 95% interval   prior better"
    )
    for row in rows:
        low, high = row.delta_ci
        delta = row.log_loss_prior - row.log_loss_default
        click.echo(
            f"{row.first:>7} {row.learners:>8} {row.predicted:>9} "
            f"{row.log_loss_default:>8.4f} {row.log_loss_prior:>8.4f}   "
            f"{delta:+.4f} [{low:+.4f}, {high:+.4f}]        "
            f"{row.prior_better}/{row.learners}"
        )
