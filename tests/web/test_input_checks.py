"""Hostile input gets a 400 (or 404) with a message on every route, never a 500."""

from __future__ import annotations

import pytest

from quizsvc.http.input_checks import MAX_ID, InputRefused, loads_strict
from tests.factories import csrf_token, fill_placeholders, make_learner, sign_in

HOSTILE_BODIES = {
    "nested 20,000 deep": b"[" * 20_000,
    "nested 33 deep": b'{"a": ' + b"[" * 32 + b"]" * 32 + b"}",
    "lone surrogate": b'{"name": "\\ud800", "text": "\\ud800", "answer": "x"}',
    "surrogate key": b'{"\\udfff": 1}',
    "NUL": b'{"name": "a\\u0000b", "text": "a\\u0000b", "skill_id": "\\u0000"}',
    "integer beyond bigint": b'{"review_id": 99999999999999999999999}',
    "integer of 5,000 digits": b'{"seed": ' + b"9" * 5000 + b"}",
    "NaN": b'{"desired_retention": NaN}',
    "float overflow": b'{"desired_retention": 1e400}',
    "not UTF-8": b'{"name": "\xff"}',
}


def every_api_route(app):
    """(method, path) for each rule under /api/, with its placeholders filled."""
    return [
        (method, fill_placeholders(rule.rule))
        for rule in app.url_map.iter_rules()
        if rule.rule.startswith("/api/")
        for method in sorted(rule.methods - {"HEAD", "OPTIONS"})
    ]


@pytest.fixture
def signed_in(db_app):
    make_learner(db_app, "ana")
    client = db_app.test_client()
    sign_in(client, "ana")
    return client


@pytest.mark.parametrize("signed", [True, False], ids=["signed-in", "anonymous"])
def test_every_json_endpoint_refuses_hostile_bodies_with_400(db_app, signed):
    """Does every API route answer a hostile JSON body with a 400 and a message?"""
    client = db_app.test_client()
    if signed:
        make_learner(db_app, "ana")
        sign_in(client, "ana")
    routes = every_api_route(db_app)
    assert len(routes) >= 15, routes
    for method, path in routes:
        for label, body in HOSTILE_BODIES.items():
            response = client.open(
                path, method=method, data=body, content_type="application/json"
            )
            assert response.status_code == 400, (method, path, label, response.json)
            assert response.json["error"] in {"invalid_input", "malformed_json"}
            assert response.json["message"], (method, path, label)


def test_the_message_says_what_was_wrong(signed_in):
    cases = {
        b"[" * 20_000: "nests deeper than 32 levels",
        b'{"text": "\\ud800"}': "lone UTF-16 surrogate (\\ud800)",
        b'{"text": "\\u0000"}': "NUL character",
        b'{"review_id": 99999999999999999999999}': "out of range",
    }
    for body, words in cases.items():
        response = signed_in.post(
            "/api/v1/drill/explanation?lang=en",
            data=body,
            content_type="application/json",
        )
        assert response.status_code == 400
        assert words in response.json["message"]


@pytest.mark.parametrize("review_id", [MAX_ID + 1, 2**63 - 1, -(2**63 - 1), 0])
def test_review_ids_beyond_the_integer_column_are_a_400(signed_in, review_id):
    response = signed_in.post(
        "/api/v1/drill/explanation", json={"review_id": review_id, "text": "because"}
    )
    assert response.status_code == 400
    assert str(MAX_ID) in response.json["message"]


def test_the_largest_id_is_looked_up_and_not_found(signed_in):
    response = signed_in.post(
        "/api/v1/drill/explanation",
        json={"review_id": MAX_ID, "text": "because I forgot the scale"},
    )
    assert response.status_code == 404
    assert response.json["error"] == "not_found"


@pytest.mark.parametrize("token_id", [MAX_ID + 1, 2**64, 10**30])
def test_huge_ids_in_urls_are_404_on_both_backends(signed_in, token_id):
    response = signed_in.delete(f"/api/v1/tokens/{token_id}")
    assert response.status_code == 404
    assert response.json["error"] == "not_found"
    assert response.json["message"]
    page = signed_in.get(f"/drill/result/{token_id}")
    assert page.status_code == 404
    assert page.status_code == signed_in.get(f"/drill/result/{MAX_ID}").status_code


def test_practice_permalinks_keep_their_64_bit_seeds(client):
    assert client.get(f"/practice/scores/1/{2**62}").status_code == 200
    assert client.get(f"/practice/scores/1/{2**64}").status_code == 404


def test_duration_beyond_a_day_is_refused(signed_in):
    response = signed_in.post(
        "/api/v1/drill/answer",
        json={"item_id": "x", "answer": "1", "duration_ms": 2**40},
    )
    assert response.status_code == 400
    assert "duration_ms" in response.json["message"]


def test_forms_and_query_arguments_refuse_nul(db_app):
    client = db_app.test_client()
    token = csrf_token(client.get("/register").get_data(as_text=True))
    response = client.post(
        "/register",
        data={
            "csrf_token": token,
            "username": "ana\x00",
            "password": "a long passphrase",
            "confirm": "a long passphrase",
        },
    )
    assert response.status_code == 400
    assert "\\u0000" in response.get_data(as_text=True)
    assert client.get("/lab?q=%00").status_code == 400


def test_nul_in_a_stored_form_field_is_refused_when_signed_in(signed_in):
    page = signed_in.get("/settings").get_data(as_text=True)
    response = signed_in.post(
        "/settings/tokens", data={"csrf_token": csrf_token(page), "name": "a\x00b"}
    )
    assert response.status_code == 400
    tokens = signed_in.get("/api/v1/tokens").json["tokens"]
    assert tokens == []


def test_strict_parser_accepts_ordinary_json():
    document = loads_strict(
        b'{"a": [1, -2.5, "\\u00e9\\u4e2d", {"b": null}], "c": true}'
    )
    assert document == {"a": [1, -2.5, "é中", {"b": None}], "c": True}
    assert loads_strict("[" * 32 + "]" * 32) is not None
    with pytest.raises(InputRefused):
        loads_strict("[" * 33 + "]" * 33)


def test_an_empty_json_body_is_not_hostile(signed_in):
    response = signed_in.get("/api/v1/settings", content_type="application/json")
    assert response.status_code == 200
