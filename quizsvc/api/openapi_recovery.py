"""The OpenAPI description of account recovery: a teacher's reset codes and
the learner's reset with one (kept apart so openapi.py stays readable)."""

from __future__ import annotations

from typing import Any

from quizsvc.api.openapi import (
    BOOLEAN,
    INTEGER,
    SECURED,
    STRING,
    _body,
    _errors,
    _object,
    _ok,
)


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
