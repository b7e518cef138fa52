"""The OpenAPI description of account recovery: a teacher's reset codes and
the learner's reset with one (kept apart so openapi.py stays readable)."""

from __future__ import annotations

from typing import Any

# Plain JSON Schema, written out here rather than borrowed from openapi.py
# (which includes this module: borrowing would make an import cycle).
STRING = {"type": "string"}
INTEGER = {"type": "integer"}
BOOLEAN = {"type": "boolean"}
SECURED = [{"session": []}, {"bearer": []}]
_MEANING = {
    400: "Malformed or invalid input (the message names the field).",
    401: "Not signed in, or the bearer token is unknown or revoked.",
    404: "Not found (or not yours).",
    415: "The body is not application/json.",
    429: "Too many attempts; wait and retry.",
}


def _json(schema: dict[str, Any]) -> dict[str, Any]:
    return {"content": {"application/json": {"schema": schema}}}


def _ok(description: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {"description": description, **_json(schema)}


def _errors(*statuses: int) -> dict[str, Any]:
    error = {"$ref": "#/components/schemas/Error"}
    return {str(s): {"description": _MEANING[s], **_json(error)} for s in statuses}


def _body(schema: dict[str, Any]) -> dict[str, Any]:
    return {"required": True, **_json(schema)}


def _object(
    properties: dict[str, Any], required: tuple[str, ...] = ()
) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = list(required)
    return schema


def recovery_paths() -> dict[str, Any]:
    """POST /classes/{class_id}/learners/{user_id}/reset-code and /auth/reset."""
    ids = [
        {"name": name, "in": "path", "required": True, "schema": INTEGER}
        for name in ("class_id", "user_id")
    ]
    user = _object(
        {
            "id": INTEGER,
            "username": STRING,
            "role": STRING,
            "locale": STRING,
            "timezone": STRING,
        }
    )
    return {
        "/classes/{class_id}/learners/{user_id}/reset-code": {
            "post": {
                "summary": "A one-time password reset code for a learner of a "
                "class you teach: valid 24 hours, one use; a newer code replaces "
                "an unused older one. Shown only in this response.",
                "security": SECURED,
                "parameters": ids,
                "responses": {
                    "201": _ok(
                        "The code.",
                        _object(
                            {
                                "user_id": INTEGER,
                                "username": STRING,
                                "code": STRING,
                                "expires_at": {
                                    "type": "string",
                                    "format": "date-time",
                                },
                            }
                        ),
                    ),
                    **_errors(400, 401, 404),
                },
            }
        },
        "/auth/reset": {
            "post": {
                "summary": "Choose a new password with a reset code from your "
                "teacher; every session and API token of the account ends. A "
                "wrong, used or expired code and an unknown username get the "
                "same 400 (invalid_reset_code) and count against a rate limit.",
                "security": [],
                "requestBody": _body(
                    _object(
                        {"username": STRING, "code": STRING, "new_password": STRING},
                        ("username", "code", "new_password"),
                    )
                ),
                "responses": {
                    "200": _ok(
                        "Changed; sign in with the new password.",
                        _object({"password_changed": BOOLEAN, "user": user}),
                    ),
                    **_errors(400, 415, 429),
                },
            }
        },
    }
