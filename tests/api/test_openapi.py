"""The OpenAPI document describes exactly the routes the API serves."""

from __future__ import annotations

import re


def _api_operations(app) -> set[tuple[str, str]]:
    operations = set()
    for rule in app.url_map.iter_rules():
        if not rule.rule.startswith("/api/v1/"):
            continue
        path = re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", rule.rule[len("/api/v1") :])
        for method in rule.methods - {"HEAD", "OPTIONS"}:
            operations.add((path, method.lower()))
    return operations


def _documented(document) -> set[tuple[str, str]]:
    return {
        (path, method) for path, item in document["paths"].items() for method in item
    }


def test_document_is_served_as_openapi_3_1(client):
    response = client.get("/api/v1/openapi.json")
    assert response.status_code == 200
    assert response.json["openapi"] == "3.1.0"


def test_every_route_is_documented_and_every_operation_exists(app, client):
    document = client.get("/api/v1/openapi.json").json
    assert _documented(document) == _api_operations(app)


def test_every_reference_resolves_and_every_operation_answers(client):
    document = client.get("/api/v1/openapi.json").json
    schemas = document["components"]["schemas"]
    text = str(document)
    for name in re.findall(r"#/components/schemas/(\w+)", text):
        assert name in schemas
    for path, item in document["paths"].items():
        for method, operation in item.items():
            assert operation["summary"], (path, method)
            assert any(code.startswith("2") for code in operation["responses"]), path
            for parameter in operation.get("parameters", []):
                if parameter["in"] == "path":
                    assert "{" + parameter["name"] + "}" in path
