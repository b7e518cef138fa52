"""`quizsvc export`: files written whole or not at all, exit 2 on bad input."""

from __future__ import annotations

import csv
import io
import json
import os
import stat
from contextlib import closing

import openpyxl
import pytest

from quizsvc.cli import main
from quizsvc.db import get_session
from quizsvc.exports import kinds
from tests.factories import HOSTILE_NAME, build_class_history, export_bank


@pytest.fixture
def history(db_app, make_bank):
    with db_app.app_context():
        return build_class_history(get_session(), export_bank(make_bank))


@pytest.fixture
def run(db_app):
    runner = db_app.test_cli_runner()

    def invoke(*args):
        return runner.invoke(main, ["export", *map(str, args)])

    return invoke


@pytest.fixture
def folder(tmp_path):
    """An empty folder for the files written (the database lives in tmp_path)."""
    path = tmp_path / "out"
    path.mkdir()
    return path


def read_csv(path):
    with open(path, encoding="utf-8-sig", newline="") as handle:
        return list(csv.reader(handle))


def test_export_writes_a_csv_file(run, history, folder):
    """Does the command write the class's reviews to the file named?"""
    target = folder / "reviews.csv"
    result = run(
        "reviews", "--class", history.classroom.id, "-o", target, "--lang", "en"
    )
    assert result.exit_code == 0, result.output
    assert result.output.strip() == f"wrote {target}"
    rows = read_csv(target)
    assert rows[0][0] == "Review id"
    assert [int(row[0]) for row in rows[1:]] == (
        history.reviews["ana"] + history.reviews["bo"]
    )
    assert list(folder.iterdir()) == [target]


def test_export_names_the_file_after_the_class_by_default(
    run, history, folder, monkeypatch
):
    """Without -o, is the file named after the class, kind and dates?"""
    monkeypatch.chdir(folder)
    result = run("summary", "--class", history.classroom.id, "--from", "2026-03-01")
    assert result.exit_code == 0, result.output
    assert [p.name for p in folder.iterdir()] == ["高二（3）班-summary-2026-03-01_.csv"]


def test_export_xlsx_and_jsonl(run, history, folder, db_app):
    """Do the XLSX workbook and the xAPI lines come out readable, the ids from
    the instance's IRI and the links from --base-url?"""
    db_app.config["INSTANCE_IRI"] = "https://lrs-name.example/"
    book = folder / "class.xlsx"
    assert run("workbook", "--class", history.classroom.id, "-o", book).exit_code == 0
    assert openpyxl.load_workbook(book).sheetnames == [
        "答题记录",
        "班级概况",
        "成绩",
    ]
    lines = folder / "xapi.jsonl"
    result = run(
        "xapi", "--class", history.classroom.id, "-o", lines,
        "--base-url", "https://quiz.example",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    statements = [json.loads(line) for line in lines.read_text("utf-8").splitlines()]
    assert len(statements) == 9
    assert statements[0]["object"]["id"] == "https://lrs-name.example/items/q-choice"
    links = [
        s["context"]["extensions"]["https://lrs-name.example/xapi/problem"]
        for s in statements
        if "extensions" in s["context"]
        and "https://lrs-name.example/xapi/problem" in s["context"]["extensions"]
    ]
    assert links == ["https://quiz.example/practice/weights/2/42"]


def test_export_gradebook_as_xlsx(run, history, folder):
    """Does the CLI write the plain gradebook with the rule and points asked?"""
    target = folder / "grades.xlsx"
    result = run(
        "gradebook", "--class", history.classroom.id, "--format", "xlsx",
        "--rule", "accuracy", "--points", 10, "-o", target,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    sheet = openpyxl.load_workbook(target)["成绩"]
    assert list(sheet.iter_rows(values_only=True))[1:] == [
        ("2026001", HOSTILE_NAME, round(60 / 7, 2)),
        ("2026002", "Bo from the profile", 5),
        ("2026003", "cy", 0),
    ]


def test_export_to_standard_output(run, history):
    """Does `-o -` print the file instead of writing one?"""
    result = run("canvas", "--class", history.classroom.id, "-o", "-", "--points", 10)
    assert result.exit_code == 0, result.output
    rows = list(csv.reader(io.StringIO(result.output.removeprefix("\ufeff"))))
    assert rows[1] == ["Points Possible", "", "", "", "", "10"]


@pytest.mark.parametrize(
    "args, message",
    [
        (["grades"], "'grades' is not one of"),
        (["xapi", "--format", "csv"], "xapi exports as jsonl, not 'csv'"),
        (["reviews", "--format", "pdf"], "'pdf' is not one of"),
        (["reviews", "--from", "2026-02-30"], "'2026-02-30' is not a date"),
        (["reviews", "--from", "2026-03-02", "--to", "2026-03-01"], "is after"),
        (["canvas", "--lesson", "lesson-99"], "unknown lesson 'lesson-99'"),
        (["canvas", "--points", "0"], "not in the range 0<x<=100000"),
        (["canvas", "--rule", "mastery"], "'mastery' is not one of"),
        (["canvas", "--format", "xlsx"], "canvas exports as csv, not 'xlsx'"),
        (["canvas", "--assignment", "Final Grade"], "must not contain 'final'"),
        (
            ["canvas", "--rule", "retention", "--retention-date", "2001-01-01"],
            "retention_date must be from today",
        ),
    ],
)
def test_bad_input_exits_2_and_writes_nothing(run, history, folder, args, message):
    """Is bad input a one-line error, exit code 2, and no file at all?"""
    target = folder / "out.csv"
    result = run(*args, "--class", history.classroom.id, "-o", target)
    assert result.exit_code == 2
    assert message in result.output
    assert "Traceback" not in result.output
    assert list(folder.iterdir()) == []


def test_unknown_class_exits_2(run, history, folder):
    """Is a class id that does not exist refused without writing?"""
    result = run("reviews", "--class", 999, "-o", folder / "out.csv")
    assert result.exit_code == 2
    assert "no class 999" in result.output
    assert list(folder.iterdir()) == []


def test_a_failure_midway_leaves_no_partial_file(run, history, folder, monkeypatch):
    """When the export breaks after some rows, is nothing left behind?"""
    real_export = kinds.class_export

    def breaking(rows):
        rows = iter(rows)
        with closing(rows):
            yield next(rows)
            raise RuntimeError("the database went away")

    def breaking_export(*args):
        tables = real_export(*args)
        for table in tables:
            table.rows = breaking(table.rows)
            # The fast path's rows break the same way.
            finished = table.finished
            if finished is not None:
                table.finished = lambda file_format, language, make=finished: breaking(
                    make(file_format, language)
                )
        return tables

    monkeypatch.setattr(kinds, "class_export", breaking_export)
    target = folder / "out.csv"
    result = run("reviews", "--class", history.classroom.id, "-o", target)
    assert result.exit_code == 1
    assert isinstance(result.exception, RuntimeError)
    assert list(folder.iterdir()) == []


@pytest.mark.parametrize("mask, mode", [(0o022, 0o644), (0o077, 0o600)])
def test_the_file_gets_the_mode_of_any_new_file(run, history, folder, mask, mode):
    """Is the file as readable as the umask makes new files, not always private?"""
    old = os.umask(mask)
    try:
        target = folder / "reviews.csv"
        result = run("reviews", "--class", history.classroom.id, "-o", target)
    finally:
        os.umask(old)
    assert result.exit_code == 0, result.output
    assert stat.S_IMODE(target.stat().st_mode) == mode
