"""The attention lab page renders every step and reports bad input next to the field."""

from __future__ import annotations

import re

import pytest


def _errors(html: str) -> dict[str, str]:
    return dict(
        re.findall(r'id="error-(\w+)" class="error" role="alert">([^<]*)<', html)
    )


def test_lab_shows_the_worked_example_by_default(client):
    response = client.get("/lab")
    html = response.get_data(as_text=True)
    assert response.status_code == 200
    for number in ["0.7071", "2.0281", "0.4931", "0.6698", "0.3302", "0.6605"]:
        assert number in html
    assert "<svg" in html and "<desc>q0: k0=0.6698, k1=0.3302</desc>" in html


def test_lab_computes_what_the_learner_typed(client):
    response = client.get(
        "/lab", query_string={"q": "0 0", "k": "1 0\n0 1", "v": "[1 0; 0 2]"}
    )
    html = response.get_data(as_text=True)
    assert response.status_code == 200
    assert "0.5000" in html and "1.0000" in html


def test_lab_causal_flag_hides_the_future(client):
    response = client.get(
        "/lab",
        query_string={
            "q": "[[1,0],[0,1]]",
            "k": "[[1,0],[0,1]]",
            "v": "[[1,0],[0,2]]",
            "causal": "1",
        },
    )
    html = response.get_data(as_text=True)
    assert response.status_code == 200
    assert 'name="causal" value="1" checked' in html
    # q0 may not see k1: its score is -inf and all its weight goes to k0
    # (without the mask the weights would be 0.6698 / 0.3302).
    assert re.search(r"q0</th>\s*<td>0\.7071</td><td>-inf</td>", html)
    assert "<desc>q0: k0=1.0000, k1=0.0000; q1: k0=0.3302, k1=0.6698</desc>" in html


def test_lab_marks_undefined_rows(client):
    response = client.get(
        "/lab",
        query_string={
            "q": "[[1,0],[0,1]]",
            "k": "[[1,0],[0,1]]",
            "v": "[[1,0],[0,2]]",
            "mask": "[[-inf,-inf],[0,0]]",
        },
    )
    html = response.get_data(as_text=True)
    assert response.status_code == 200
    assert "undefined" in html and 'role="alert"' in html


@pytest.mark.parametrize(
    ("query", "field", "fragment"),
    [
        ({"q": "[[1,0]]", "k": "[[1,0,1]]", "v": "[[1]]"}, "k", "K has 3 columns"),
        ({"q": "[[1,zz]]", "k": "[[1,0]]", "v": "[[1]]"}, "q", "row 1, column 2"),
        ({"q": "", "k": "[[1,0]]", "v": "[[1]]"}, "q", "empty input"),
        ({"q": "[[1,0]]", "k": "[[1,0]]", "v": "[[1],[2]]"}, "v", "V has 2 rows"),
        (
            {"q": "[[1,0]]", "k": "[[1,0]]", "v": "[[1]]", "mask": "[[0, 0]]"},
            "mask",
            "The mask is 1×2",
        ),
        (
            {"q": "[[1,0]]", "k": "[[1,0]]", "v": "[[1]]", "mask": "[[nan]]"},
            "mask",
            "NaN",
        ),
        (
            {"q": "[" + ",".join(["[1]"] * 40) + "]", "k": "[[1]]", "v": "[[1]]"},
            "q",
            "16",
        ),
        ({"q": "[[1e200]]", "k": "[[1e200]]", "v": "[[1]]"}, "k", "too large"),
        ({"q": "[" * 5000 + "]" * 5000, "k": "[[1]]", "v": "[[1]]"}, "q", ""),
    ],
)
def test_bad_input_is_a_400_with_the_error_next_to_its_field(
    client, query, field, fragment
):
    response = client.get("/lab", query_string={**query, "lang": "en"})
    assert response.status_code == 400
    errors = _errors(response.get_data(as_text=True))
    assert field in errors, errors
    assert fragment in errors[field].replace("&#39;", "'")


def _lab_post(client, fields):
    from tests.factories import csrf_token

    token = csrf_token(client.get("/lab").get_data(as_text=True))
    return client.post("/lab", data={"csrf_token": token, **fields})


def _square(side: int) -> str:
    return "\n".join(
        " ".join(str((i + j) % 3) for j in range(side)) for i in range(side)
    )


def test_the_lab_takes_the_documented_16_by_16_by_post(client):
    """Does a 16×16 Q, K and V go through (a form too large for a URL), and 17 not?"""
    big = _square(16)
    response = _lab_post(client, {"q": big, "k": big, "v": big, "mask": ""})
    html = response.get_data(as_text=True)
    assert response.status_code == 200, _errors(html)
    assert html.count('<tr><th scope="row">q15</th>') >= 1
    too_big = _lab_post(client, {"q": _square(17), "k": big, "v": big})
    assert (
        too_big.status_code == 400
        and "16" in _errors(too_big.get_data(as_text=True))["q"]
    )


def test_the_lab_form_is_sent_by_post(client):
    html = client.get("/lab").get_data(as_text=True)
    assert '<form method="post"' in html and 'name="csrf_token"' in html


def test_lab_errors_are_in_chinese_on_a_chinese_page(client):
    """Are engine and parser errors said in the page's language?"""
    response = client.get(
        "/lab", query_string={"q": "[[1,zz]]", "k": "[[1,0,1]]", "v": "[[1]]"}
    )
    errors = _errors(response.get_data(as_text=True))
    assert "第 1 行第 2 列" in errors["q"]
    mismatch = client.get(
        "/lab", query_string={"q": "[[1,0]]", "k": "[[1,0,1]]", "v": "[[1]]"}
    )
    assert "K 有 3 列" in _errors(mismatch.get_data(as_text=True))["k"]


def test_the_lab_reads_numbers_as_everywhere_else(client):
    """Are √, fractions and a key mask of one row accepted, as in answers?"""
    response = client.get(
        "/lab",
        query_string={
            "q": "[[1/√2, 0]]",
            "k": "[[１, 0], [0, 1]]",
            "v": "[[1,0],[0,2]]",
            "mask": "0 -inf",
        },
    )
    html = response.get_data(as_text=True)
    assert response.status_code == 200, _errors(html)
    assert "1.0000" in html
