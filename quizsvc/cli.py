"""The `quizsvc` command line: a Flask CLI group with the service's commands.

Each feature keeps its commands in its own module; this file only wires them,
by name: a command's module is imported when that command runs, so
`quizsvc export` does not pay for Alembic, NumPy or the drill's imports.
Bad input exits with code 2 and a one-line message, never a traceback.
"""

from __future__ import annotations

import importlib
import json
import sys
from typing import Any

import click

from quizsvc import create_app

# Feature commands live in quizsvc/commands/<feature>.py. Each name maps to
# where its command is and its short help, which `quizsvc --help` shows
# without importing it (tests/cli/test_cli.py checks the two agree).
LAZY_COMMANDS = {
    "check": (
        "quizsvc.commands.problems:check_command",
        "Grade answers to a generated problem, read as JSON from FILE or stdin.",
    ),
    "db": (
        "quizsvc.commands.db:db_group",
        "Create and upgrade the database schema (Alembic migrations in migrations/).",
    ),
    "demo-data": (
        "quizsvc.commands.demo:demo_data_command",
        "Add demo learners and reviews of the synced items (run `questions sync` "
        "first).",
    ),
    "export": (
        "quizsvc.commands.export:export_command",
        "Export a class's reviews, summary, grades (Canvas or plain), xAPI or "
        "workbook.",
    ),
    "fsrs": (
        "quizsvc.commands.fsrs:fsrs_group",
        "Fit FSRS parameters (learners, class priors) and evaluate schedulers.",
    ),
    "lti": (
        "quizsvc.commands.lti:lti_group",
        "Register LMS platforms (LTI 1.3) and send a class's grades to its LMS.",
    ),
    "problem": (
        "quizsvc.commands.problems:problem_command",
        "Print a generated attention problem.",
    ),
    "questions": (
        "quizsvc.commands.questions:questions",
        "Check the question bank (questions/) and preview its questions.",
    ),
    "routes": ("flask.cli:routes_command", "Show the routes for the app."),
    "shell": ("flask.cli:shell_command", "Run a shell in the app context."),
    "users": (
        "quizsvc.commands.users:users_group",
        "Create accounts, give them roles or new passwords, list them.",
    ),
}

# Commands that need the app's configuration and database, not its web parts.
DATA_COMMANDS = frozenset({"export"})


class LazyGroup(click.Group):
    """A click group whose commands are imported only when they are used."""

    def __init__(self, *args: Any, lazy: dict[str, tuple[str, str]], **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.lazy = lazy

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.lazy})

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in self.lazy and name not in self.commands:
            self.add_command(load_command(name), name)
        return super().get_command(ctx, name)

    def format_commands(
        self, ctx: click.Context, formatter: click.HelpFormatter
    ) -> None:
        # Click's own listing, with a stand-in for each command not imported.
        loaded = self.commands
        stand_ins = {
            name: click.Command(name, help=summary)
            for name, (_where, summary) in self.lazy.items()
        }
        self.commands = {**stand_ins, **loaded}
        try:
            super().format_commands(ctx, formatter)
        finally:
            self.commands = loaded


def load_command(name: str) -> click.Command:
    """Import a lazily registered command."""
    module, attribute = LAZY_COMMANDS[name][0].split(":")
    command = getattr(importlib.import_module(module), attribute)
    if name == "questions":
        # `questions sync` writes to the database, so it lives with `db`.
        from quizsvc.commands.db import questions_sync_command

        command.add_command(questions_sync_command)
    return command


@click.group(
    cls=LazyGroup,
    lazy=LAZY_COMMANDS,
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.version_option(package_name="quizsvc")
@click.pass_context
def main(ctx: click.Context) -> None:
    """quizsvc: spaced-repetition drills for computing attention by hand.

    Configuration comes from instance/config.py and QUIZSVC_* environment
    variables (see the README).
    """
    # Commands that need the app load it lazily through Flask's ScriptInfo;
    # tests pass their own (app.test_cli_runner does).
    if ctx.obj is None:
        from flask.cli import ScriptInfo

        factory = create_app
        if ctx.invoked_subcommand in DATA_COMMANDS:
            from quizsvc.app import create_data_app as factory
        ctx.obj = ScriptInfo(create_app=factory, set_debug_flag=False)


class InputError(click.ClickException):
    """Input a command cannot use: one line on stderr ("Error: …"), exit code 2."""

    exit_code = 2

    def __init__(self, message: str):
        # One line, whatever the input held (a pasted matrix may hold breaks).
        super().__init__(" ".join(message.split()))


class MatrixParam(click.ParamType):
    """A click parameter holding a matrix typed as JSON or MATLAB-style rows."""

    name = "MATRIX"

    def convert(self, value, param, ctx):
        import numpy as np

        from quizsvc.parsing import MatrixFormatError, parse_matrix

        if isinstance(value, np.ndarray):
            return value
        label = param.name if param is not None else "matrix"
        try:
            return parse_matrix(value, name=f"--{label}")
        except MatrixFormatError as exc:
            raise InputError(str(exc)) from None


def _mask_param(value: str | None) -> Any:
    import numpy as np

    from quizsvc.parsing import MatrixFormatError, parse_matrix

    if value is None:
        return None
    lowered = value.strip().lower()
    if any(word in lowered for word in ("true", "false")):
        try:
            decoded = json.loads(lowered)
            return np.asarray(decoded, dtype=bool)
        except (ValueError, TypeError):
            raise InputError(
                "--mask: a boolean mask must be JSON such as [[true, false]]"
            ) from None
    try:
        return parse_matrix(value, name="--mask")
    except MatrixFormatError as exc:
        raise InputError(str(exc)) from None


@main.command("attention")
@click.option("--q", "q", type=MatrixParam(), required=True, help="Queries [Tq, d].")
@click.option("--k", "k", type=MatrixParam(), required=True, help="Keys [Tk, d].")
@click.option("--v", "v", type=MatrixParam(), required=True, help="Values [Tk, dv].")
@click.option("--mask", help="Mask [Tq, Tk]: additive (0 / -inf) or boolean JSON.")
@click.option("--causal", is_flag=True, help="Hide keys after each query's position.")
@click.option("--scale", type=float, help="Score scale (default 1/sqrt(d)).")
@click.option(
    "--temperature",
    type=float,
    default=1.0,
    show_default=True,
    help="Divide the scores by this before the softmax.",
)
@click.option("--json", "as_json", is_flag=True, help="Print machine-readable JSON.")
def attention_command(q, k, v, mask, causal, scale, temperature, as_json) -> None:
    """Compute attention step by step and print every intermediate.

    Example (the lesson's worked example):

        quizsvc attention --q '[[1,0]]' --k '[[1,0],[0,1]]' --v '[[1,0],[0,2]]'
    """
    import numpy as np

    from quizsvc.engine import AttentionInputError, attention
    from quizsvc.formatting import format_matrix

    try:
        trace = attention(
            q,
            k,
            v,
            mask=_mask_param(mask),
            causal=causal,
            scale=scale,
            temperature=temperature,
        )
    except AttentionInputError as exc:
        raise InputError(str(exc)) from None
    if as_json:
        click.echo(json.dumps(trace.to_dict(), ensure_ascii=False))
        return
    d = q.shape[-1]
    click.echo(
        f"d = {d}, scale = {trace.scale:.4f}, temperature = {trace.temperature:g}"
    )
    sections = [
        ("scores S = QKᵀ·scale/temperature + M", trace.scores),
        ("exp(S)", trace.exp_unshifted()),
        ("exp(S − m), m = row max", trace.exp),
        ("weights A = softmax(S), each row sums to 1", trace.weights),
        ("output O = AV", trace.output),
    ]
    for title, matrix in sections:
        click.echo(f"\n{title}:")
        click.echo(format_matrix(matrix))
    if trace.undefined_rows.any():
        rows = [int(i) for i in np.flatnonzero(trace.undefined_rows)]
        click.echo(
            f"\nundefined rows (every key masked, no valid denominator): {rows}",
            err=True,
        )


@main.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to bind.")
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=8000,
    show_default=True,
    help="Port to listen on (0 picks a free one).",
)
@click.option(
    "--workers",
    type=click.IntRange(1, 64),
    default=2,
    show_default=True,
    help="Number of gunicorn worker processes.",
)
def serve_command(host: str, port: int, workers: int) -> None:
    """Run the service under gunicorn (a production WSGI server)."""
    from quizsvc.server import run_server

    run_server(host=host, port=port, workers=workers)


def run() -> None:  # pragma: no cover - thin wrapper used by `python -m quizsvc`
    """Entry point for `python -m quizsvc`."""
    sys.exit(main())
