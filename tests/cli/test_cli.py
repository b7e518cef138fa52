"""The command line: every command has --help, and bad input exits 2 with a message."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import click
import pytest
from click.testing import CliRunner

from quizsvc.cli import LAZY_COMMANDS, load_command, main


def _all_commands(group: click.Group, prefix=()):
    context = click.Context(group)
    for name in group.list_commands(context):
        command = group.get_command(context, name)
        yield (*prefix, name)
        if isinstance(command, click.Group):
            yield from _all_commands(command, (*prefix, name))


@pytest.mark.parametrize("path", [(), *_all_commands(main)], ids=" ".join)
def test_every_command_has_help(path):
    result = CliRunner().invoke(main, [*path, "--help"])
    assert result.exit_code == 0, result.output
    assert "Usage:" in result.output


@pytest.mark.parametrize("name", sorted(LAZY_COMMANDS))
def test_lazy_command_summary_is_its_short_help(name):
    """Does `quizsvc --help` show each command's own summary without importing it?"""
    command = load_command(name)
    for limit in (40, 60, 1000):
        assert click.Command(name, help=LAZY_COMMANDS[name][1]).get_short_help_str(
            limit
        ) == command.get_short_help_str(limit)


@pytest.mark.parametrize(
    ("args", "absent"),
    [
        (["--help"], ["quizsvc.commands", "flask", "sqlalchemy", "numpy"]),
        (
            ["export", "--help"],
            ["alembic", "quizsvc.commands.db", "quizsvc.services.accounts"],
        ),
        # The export's app has the configuration and database, no web parts.
        (
            ["export", "reviews", "--class", "9"],
            ["quizsvc.services.accounts", "quizsvc.web", "quizsvc.http"],
        ),
    ],
)
def test_cli_imports_only_the_invoked_command(args, absent, tmp_path):
    """Does the CLI import a command's module only when that command is used?"""
    script = (
        "import sys\n"
        "from quizsvc.cli import main\n"
        # An empty database: the export fails after the app is made.
        f"try:\n    main({args!r})\nexcept BaseException:\n    pass\n"
        "print(' '.join(sorted(sys.modules)))"
    )
    output = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "QUIZSVC_INSTANCE_PATH": str(tmp_path)},
    ).stdout
    modules = output.splitlines()[-1].split()
    for name in absent:
        assert not [m for m in modules if m == name or m.startswith(name + ".")]


LESSON_ARGS = [
    "attention",
    "--q",
    "[[1,0]]",
    "--k",
    "[[1,0],[0,1]]",
    "--v",
    "[[1,0],[0,2]]",
]


def test_attention_prints_the_lesson_numbers():
    result = CliRunner().invoke(main, LESSON_ARGS)
    assert result.exit_code == 0, result.output
    for expected in [
        "0.7071  0.0000",
        "2.0281  1.0000",
        "1.0000  0.4931",
        "0.6698  0.3302",
        "0.6698  0.6605",
    ]:
        assert expected in result.output


def test_attention_json_is_machine_readable():
    result = CliRunner().invoke(main, [*LESSON_ARGS, "--json"])
    data = json.loads(result.output)
    assert data["weights"][0] == pytest.approx([0.6698, 0.3302], abs=5e-5)
    assert data["output"][0] == pytest.approx([0.6698, 0.6605], abs=5e-5)
    assert data["exp_unshifted"][0] == pytest.approx([2.0281, 1.0], abs=5e-5)


def test_attention_accepts_matlab_rows_and_causal():
    result = CliRunner().invoke(
        main,
        [
            "attention",
            "--q",
            "[1 0; 0 1]",
            "--k",
            "[1 0; 0 1]",
            "--v",
            "[1 0; 0 2]",
            "--causal",
            "--json",
        ],
    )
    data = json.loads(result.output)
    assert data["weights"][0] == [1.0, 0.0]
    assert data["scores"][0][1] == "-inf"


def test_fully_masked_row_prints_undefined():
    result = CliRunner().invoke(
        main,
        [
            *LESSON_ARGS[:2],
            "[[1,0],[0,1]]",
            *LESSON_ARGS[3:],
            "--mask",
            "[[-inf,-inf],[0,0]]",
        ],
    )
    assert result.exit_code == 0
    assert "undefined" in result.output


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["--q", "[[1,0]]", "--k", "[[1,0,1]]", "--v", "[[1]]"], "k must have shape"),
        (["--q", "[[1,x]]", "--k", "[[1,0]]", "--v", "[[1]]"], "row 1, column 2"),
        (["--q", "[[1,0],[1]]", "--k", "[[1,0]]", "--v", "[[1]]"], "row 2 has 1"),
        (
            ["--q", "[[1,0]]", "--k", "[[1,0]]", "--v", "[[1]]", "--mask", "[[0,0,0]]"],
            "mask must be broadcastable",
        ),
        (
            ["--q", "[[1,0]]", "--k", "[[1,0]]", "--v", "[[1]]", "--temperature", "0"],
            "temperature",
        ),
        (["--q", "", "--k", "[[1,0]]", "--v", "[[1]]"], "empty input"),
    ],
)
def test_bad_input_exits_2_with_a_message(args, fragment):
    result = CliRunner().invoke(main, ["attention", *args])
    assert result.exit_code == 2
    assert fragment in result.output
    assert "Traceback" not in result.output
