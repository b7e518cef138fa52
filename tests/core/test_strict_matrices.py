"""Typed matrices are read strictly: nothing typed silently disappears.

Unbalanced brackets, empty cells (``1,,2``), a separator at the end of a row
and ragged rows are format errors that name the row and the column, in the
shared parser and so everywhere it is used: `quizsvc attention`, the lab, the
practice checker and the grader behind the drill.
"""

from __future__ import annotations

import re

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from quizsvc import grading, problems
from quizsvc.cli import main
from quizsvc.parsing import MatrixFormatError, parse_matrix, parse_value

CELL = st.integers(-50, 50).map(lambda n: repr(n / 4))
# At least two columns, so that emptying one cell leaves a separator behind.
MATRICES = st.integers(2, 4).flatmap(
    lambda width: st.lists(
        st.lists(CELL, min_size=width, max_size=width), min_size=1, max_size=4
    )
)
# Layouts whose cells are separated by commas (spaces alone cannot show an
# empty cell: "1  2" is two cells however many spaces stand between them).
LAYOUTS = {
    "json": lambda rows: "[" + ", ".join("[" + ", ".join(r) + "]" for r in rows) + "]",
    "rows": lambda rows: ", ".join("[" + ", ".join(r) + "]" for r in rows),
    "matlab": lambda rows: "[" + "; ".join(", ".join(r) for r in rows) + "]",
    "lines": lambda rows: "\n".join(",".join(r) for r in rows),
    "chinese": lambda rows: "；".join("，".join(r) for r in rows),
}


def _refused(text: str) -> MatrixFormatError:
    with pytest.raises(MatrixFormatError) as caught:
        parse_matrix(text, "A", parse_value)
    return caught.value


@settings(max_examples=300, deadline=None)
@given(rows=MATRICES, layout=st.sampled_from(sorted(LAYOUTS)), data=st.data())
def test_an_emptied_cell_is_named_by_its_row_and_column(rows, layout, data):
    """Does a cell typed as nothing give an error at that very row and column?"""
    i = data.draw(st.integers(0, len(rows) - 1), label="row")
    j = data.draw(st.integers(0, len(rows[0]) - 1), label="column")
    holed = [list(row) for row in rows]
    holed[i][j] = ""
    error = _refused(LAYOUTS[layout](holed))
    last = j == len(rows[0]) - 1
    if last:
        assert (error.code, error.row, error.col) == (
            "matrix.trailing_separator",
            i + 1,
            j,
        )
    else:
        assert (error.code, error.row, error.col) == ("matrix.empty_cell", i + 1, j + 1)
    assert f"{i + 1}" in error.messages["zh-CN"] and f"row {i + 1}" in str(error)


@settings(max_examples=300, deadline=None)
@given(
    rows=MATRICES, layout=st.sampled_from(["json", "rows", "matlab"]), data=st.data()
)
def test_any_missing_or_extra_bracket_is_a_format_error_with_a_place(
    rows, layout, data
):
    """Is every unbalanced bracket refused, never read as some other matrix?"""
    text = LAYOUTS[layout](rows)
    brackets = [m.start() for m in re.finditer(r"[\[\]]", text)]
    at = data.draw(st.sampled_from(brackets), label="bracket")
    if data.draw(st.booleans(), label="delete"):
        typed = text[:at] + text[at + 1 :]
    else:
        typed = text[:at] + text[at] + text[at:]
    error = _refused(typed)
    assert error.row is not None and error.row >= 1
    assert error.code.startswith("matrix.")


@settings(max_examples=200, deadline=None)
@given(rows=MATRICES, layout=st.sampled_from(sorted(LAYOUTS)), data=st.data())
def test_a_short_row_is_named_with_both_widths(rows, layout, data):
    """Is a row with a cell too few refused, naming that row?"""
    i = data.draw(st.integers(0, len(rows) - 1), label="row")
    if len(rows) == 1:
        rows = [*rows, list(rows[0])]
        i = 1
    ragged = [list(row) for row in rows]
    del ragged[i][-1]
    error = _refused(LAYOUTS[layout](ragged))
    assert error.code == "matrix.ragged"
    # The short row is named, as the row or as the row it is measured against.
    assert i + 1 in (error.row, error.params["other_row"])
    assert error.params["width"] != error.params["other_width"]


@settings(max_examples=200, deadline=None)
@given(
    rows=MATRICES,
    layout=st.sampled_from(sorted(LAYOUTS)),
    pad=st.sampled_from(["", " ", "  ", "\n", " \n "]),
)
def test_a_well_formed_matrix_still_reads_back_with_any_spacing(rows, layout, pad):
    """Does strictness leave every well-formed layout (and its spacing) alone?"""
    text = pad + LAYOUTS[layout](rows) + pad
    expected = [[float(x) for x in row] for row in rows]
    assert parse_matrix(text, "A", parse_value).tolist() == expected


@pytest.mark.parametrize(
    ("typed", "code", "row", "col"),
    [
        ("[[1,0", "matrix.unclosed_row", 1, 2),
        ("[[1, 0], [0, 1]", "matrix.unclosed_matrix", 2, 2),
        ("[[1, 0]], [0, 1]]", "matrix.extra_bracket", 2, 2),
        ("[1, 0]]", "matrix.extra_bracket", 1, 2),
        ("[[1,,0]]", "matrix.empty_cell", 1, 2),
        ("1,2,,3", "matrix.empty_cell", 1, 3),
        ("1, 2,\n3, 4,", "matrix.trailing_separator", 1, 2),
        ("[[1, 2], [3, 4],]", "matrix.empty_row", 3, None),
        ("[[1, 2],, [3, 4]]", "matrix.empty_row", 2, None),
        ("[[1, 2], x, [3, 4]]", "matrix.loose_entry", 2, None),
        ("[1, [2], 3]", "matrix.not_rows", None, None),  # valid JSON: not rows
        ("[1 [2] 3]", "matrix.loose_entry", 1, None),
        ("[[1 [2] 3]]", "matrix.nested_entry", 1, 2),
    ],
)
def test_each_kind_of_format_error_says_where(typed, code, row, col):
    """Does each broken layout get its own code, row and column?"""
    error = _refused(typed)
    assert (error.code, error.row, error.col) == (code, row, col)


@pytest.mark.parametrize(
    "typed", ["[1 2; 3 4;]", "1 2\n\n3 4\n", "[1 2]\n[3 4]", "[[1, 2]; [3, 4]]"]
)
def test_matlab_row_breaks_stay_lenient(typed):
    """Is a trailing ';' or a blank line still fine, as MATLAB has it?"""
    assert parse_matrix(typed, "A", parse_value).tolist() == [[1, 2], [3, 4]]


# ---------------------------------------------------------------------------
# Every surface gets the parser's error.


def test_the_cli_refuses_an_unclosed_matrix_with_one_line():
    """Does `quizsvc attention --q '[[1,0'` exit 2 with one line, no traceback?"""
    result = CliRunner().invoke(
        main, ["attention", "--q", "[[1,0", "--k", "[[1,0]]", "--v", "[[1]]"]
    )
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert lines == [
        "Error: --q: row 1: the '[' that opens it is never closed; add ']' after "
        "column 2"
    ]


@pytest.mark.parametrize("typed", ["[[1,,0]]", "1,0,", "[[1,0],[0]]", "[[1,0]]]"])
def test_the_cli_names_the_row_of_any_broken_matrix(typed):
    result = CliRunner().invoke(
        main, ["attention", "--q", typed, "--k", "[[1,0]]", "--v", "[[1]]"]
    )
    assert result.exit_code == 2
    assert len(result.output.strip().splitlines()) == 1
    assert "row " in result.output and "Traceback" not in result.output


def test_the_lab_shows_the_parsers_error_next_to_the_field(client):
    response = client.get(
        "/lab", query_string={"q": "[[1,0", "k": "[[1,0]]", "v": "[[1]]"}
    )
    assert response.status_code == 400
    html = response.get_data(as_text=True)
    assert "第 1 行：开头的“[”没有闭合；请在第 2 列之后补上“]”" in html


def test_the_practice_checker_returns_the_row_and_column(client):
    response = client.post(
        "/api/v1/problems/lesson_example:1:0/check?lang=en",
        json={"answers": {"S": "[0.7071,, 0]"}},
    )
    assert response.status_code == 400
    error = response.json["format_errors"][0]
    assert (error["quantity"], error["row"], error["col"]) == ("S", 1, 2)


@pytest.mark.parametrize(
    ("typed", "row", "col"), [("[[0.7071, 0", 1, 2), ("0.7071, 0,", 1, 2)]
)
def test_the_grader_behind_the_drill_sees_the_same_error(typed, row, col):
    """Is a broken matrix a format error (asked again), not a wrong answer?"""
    problem = problems.generate("lesson_example", 0, 1)
    verdict = grading.grade(problem, {"S": typed})
    assert not verdict.correct
    [error] = verdict.format_errors
    assert (error.quantity, error.row, error.col) == ("S", row, col)
