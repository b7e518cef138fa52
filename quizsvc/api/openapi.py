"""The OpenAPI 3.1 description of /api/v1, served at /api/v1/openapi.json.

Written by hand, next to the routes; tests/api/test_openapi.py checks that every
route is described and every described operation exists.
"""

from __future__ import annotations

from typing import Any

from quizsvc import __version__
from quizsvc.api import bp


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def _json(schema: dict[str, Any]) -> dict[str, Any]:
    return {"content": {"application/json": {"schema": schema}}}


def _ok(description: str, schema: dict[str, Any] | None = None) -> dict[str, Any]:
    response: dict[str, Any] = {"description": description}
    if schema is not None:
        response.update(_json(schema))
    return response


def _errors(*statuses: int) -> dict[str, Any]:
    meaning = {
        400: "Malformed or invalid input (the message names the field).",
        401: "Not signed in, or the bearer token is unknown or revoked.",
        403: "Your account's role does not allow this (e.g. not a teacher).",
        404: "Not found (or not yours).",
        409: "Conflicts with the drill's state (e.g. the item is not open).",
        413: "The body is larger than MAX_CONTENT_LENGTH.",
        415: "The body is not application/json.",
        423: "Closed book: this would answer an item open in your drill (or a "
        "wrong answer not yet explained).",
        429: "Too many attempts; wait and retry.",
    }
    return {
        str(s): {"description": meaning[s], **_json(_ref("Error"))} for s in statuses
    }


def _body(schema: dict[str, Any], required: bool = True) -> dict[str, Any]:
    return {"required": required, **_json(schema)}


def _object(
    properties: dict[str, Any], required: tuple[str, ...] = ()
) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = list(required)
    return schema


STRING = {"type": "string"}
INTEGER = {"type": "integer"}
NUMBER = {"type": "number"}
BOOLEAN = {"type": "boolean"}
ANY_OBJECT = {"type": "object", "additionalProperties": True}
BILINGUAL = _object({"zh-CN": STRING, "en": STRING})
SECURED = [{"session": []}, {"bearer": []}]


def build_document() -> dict[str, Any]:
    """Return the OpenAPI document."""
    from quizsvc.api.openapi_recovery import recovery_paths

    credentials = _object(
        {
            "username": STRING,
            "password": STRING,
            "locale": {"type": "string", "enum": ["zh-CN", "en"]},
        },
        ("username", "password"),
    )
    user = _object(
        {
            "user": _object(
                {
                    "id": INTEGER,
                    "username": STRING,
                    "role": STRING,
                    "locale": STRING,
                    "timezone": STRING,
                }
            )
        }
    )
    token = _object(
        {
            "id": INTEGER,
            "name": STRING,
            "created_at": STRING,
            "revoked_at": {"type": ["string", "null"]},
            "token": {"type": "string", "description": "Only when created."},
        }
    )
    problem_request = _object(
        {
            "kind": STRING,
            "level": {"type": "integer", "enum": [1, 2, 3]},
            "seed": INTEGER,
        },
        ("kind",),
    )
    paths: dict[str, Any] = {
        "/auth/register": {
            "post": {
                "summary": "Create a learner account and sign in.",
                "security": [],
                "requestBody": _body(credentials),
                "responses": {
                    "201": _ok("Created and signed in.", user),
                    **_errors(400, 409, 415, 429),
                },
            }
        },
        "/auth/login": {
            "post": {
                "summary": "Sign in; the response sets the session cookie.",
                "security": [],
                "requestBody": _body(credentials),
                "responses": {
                    "200": _ok("Signed in.", user),
                    **_errors(400, 401, 415, 429),
                },
            }
        },
        "/auth/logout": {
            "post": {
                "summary": "End this session on the server.",
                "security": SECURED,
                "responses": {
                    "200": _ok("Signed out.", _object({"signed_out": BOOLEAN})),
                    **_errors(401),
                },
            }
        },
        "/auth/logout-everywhere": {
            "post": {
                "summary": "End every session of yours, this one included "
                "(tokens stay valid).",
                "security": SECURED,
                "responses": {
                    "200": _ok(
                        "Signed out everywhere.",
                        _object({"signed_out": BOOLEAN, "sessions_ended": INTEGER}),
                    ),
                    **_errors(401),
                },
            }
        },
        "/auth/password": {
            "post": {
                "summary": "Change your password; every other session ends, and "
                "your API tokens too with revoke_tokens.",
                "security": SECURED,
                "requestBody": _body(
                    _object(
                        {
                            "current_password": STRING,
                            "new_password": STRING,
                            "revoke_tokens": BOOLEAN,
                        },
                        ("current_password", "new_password"),
                    )
                ),
                "responses": {
                    "200": _ok(
                        "Changed.",
                        _object(
                            {
                                "password_changed": BOOLEAN,
                                "other_sessions_ended": INTEGER,
                                "tokens_revoked": BOOLEAN,
                            }
                        ),
                    ),
                    **_errors(400, 401, 415),
                },
            }
        },
        "/tokens": {
            "get": {
                "summary": "List your live API tokens (never their secrets).",
                "security": SECURED,
                "responses": {
                    "200": _ok(
                        "Tokens.",
                        _object({"tokens": {"type": "array", "items": token}}),
                    ),
                    **_errors(401),
                },
            },
            "post": {
                "summary": "Create a personal API token (the secret is shown once).",
                "security": SECURED,
                "requestBody": _body(_object({"name": STRING}), required=False),
                "responses": {"201": _ok("Created.", token), **_errors(400, 401, 415)},
            },
        },
        "/tokens/{token_id}": {
            "delete": {
                "summary": "Revoke one of your tokens.",
                "security": SECURED,
                "parameters": [
                    {
                        "name": "token_id",
                        "in": "path",
                        "required": True,
                        "schema": INTEGER,
                    }
                ],
                "responses": {"200": _ok("Revoked.", token), **_errors(401, 404)},
            }
        },
        "/drill/next": {
            "get": {
                "summary": "The open drill item in public form (never its answer), "
                "or done.",
                "security": SECURED,
                "responses": {
                    "200": _ok(
                        "The item, or {done: true, next_due}.",
                        {
                            "oneOf": [
                                _ref("DrillItem"),
                                _object(
                                    {
                                        "done": {"const": True},
                                        # false while learning steps wait for
                                        # their spacing: come back at next_due
                                        "day_done": BOOLEAN,
                                        "steps_waiting": INTEGER,
                                        "next_due": {
                                            "type": ["string", "null"],
                                            "format": "date-time",
                                        },
                                        "reviewed_today": INTEGER,
                                    },
                                    ("done",),
                                ),
                            ]
                        },
                    ),
                    **_errors(401, 409),
                },
            }
        },
        "/drill/answer": {
            "post": {
                "summary": "Grade and record an answer to the open item "
                "(idempotent by key).",
                "security": SECURED,
                "requestBody": _body(
                    _object(
                        {
                            "item_id": STRING,
                            "answer": {
                                "description": "Option ids, a number, text, step ids, "
                                "or "
                                "{ask name: typed matrix} for generated items."
                            },
                            "rating": {
                                "type": "string",
                                "enum": [
                                    "again",
                                    "hard",
                                    "good",
                                    "easy",
                                    "pass",
                                    "fail",
                                ],
                            },
                            "duration_ms": INTEGER,
                            "idempotency_key": STRING,
                            "next": {
                                "type": "boolean",
                                "description": "Open the next item after a right "
                                "answer and return it as `next` (default true); "
                                "false leaves it for drill/next (e.g. to show the "
                                "note first: the open item's note is closed).",
                            },
                        },
                        ("item_id",),
                    )
                ),
                "responses": {
                    "201": _ok("Recorded.", _ref("AnswerResult")),
                    "200": _ok(
                        "A retry: the first result, nothing new stored.",
                        _ref("AnswerResult"),
                    ),
                    **_errors(400, 401, 404, 409, 415),
                },
            }
        },
        "/drill/reveal": {
            "post": {
                "summary": "Show the open recall item's model answer before "
                "self-rating.",
                "security": SECURED,
                "requestBody": _body(_object({"item_id": STRING}, ("item_id",))),
                "responses": {
                    "200": _ok(
                        "The model answer.",
                        _object(
                            {
                                "item_id": STRING,
                                "model_answer": BILINGUAL,
                                "key_points": {"type": "array", "items": BILINGUAL},
                            }
                        ),
                    ),
                    **_errors(400, 401, 409, 415),
                },
            }
        },
        "/drill/explanation": {
            "post": {
                "summary": "Explain a wrong answer; unlocks its explanation and note.",
                "security": SECURED,
                "requestBody": _body(
                    _object(
                        {"review_id": INTEGER, "text": STRING}, ("review_id", "text")
                    )
                ),
                "responses": {
                    "201": _ok(
                        "Stored; the explanation and note id.",
                        _object(
                            {
                                "review_id": INTEGER,
                                "explanation_id": INTEGER,
                                "explanation": STRING,
                                "note_id": STRING,
                                "misconception": {"type": ["string", "null"]},
                                "misconception_explanation": {
                                    "type": ["string", "null"]
                                },
                            }
                        ),
                    ),
                    **_errors(400, 401, 404, 409, 415),
                },
            }
        },
        "/notes/{note_id}": {
            "get": {
                "summary": "A lesson note, for a signed-in learner (every note "
                "answers 423 while an item is open in your drill or a wrong "
                "answer waits for its explanation).",
                "security": SECURED,
                "parameters": [
                    {
                        "name": "note_id",
                        "in": "path",
                        "required": True,
                        "schema": STRING,
                    }
                ],
                "responses": {
                    "200": _ok(
                        "The note.",
                        _object(
                            {
                                "id": STRING,
                                "lesson_id": STRING,
                                "title": STRING,
                                "body": STRING,
                            }
                        ),
                    ),
                    **_errors(401, 404, 423),
                },
            }
        },
        "/problems": {
            "post": {
                "summary": "A generated problem (random seed unless given), "
                "in public form.",
                "security": [{}, *SECURED],
                "requestBody": _body(problem_request),
                "responses": {
                    "201": _ok("The problem with its id.", _ref("Problem")),
                    **_errors(400, 415),
                },
            }
        },
        "/problems/{problem_id}/check": {
            "post": {
                "summary": "Grade answers to a generated problem, step by step.",
                "security": [{}, *SECURED],
                "parameters": [
                    {
                        "name": "problem_id",
                        "in": "path",
                        "required": True,
                        "schema": STRING,
                        "description": "kind:level:seed, as POST /problems returns",
                    }
                ],
                "requestBody": _body(_object({"answers": ANY_OBJECT}, ("answers",))),
                "responses": {
                    "200": _ok("The verdict.", _ref("Verdict")),
                    **_errors(400, 404, 415, 423),
                },
            }
        },
        "/self-assessments": {
            "get": {
                "summary": "Your self-ratings per skill, latest and history.",
                "security": SECURED,
                "responses": {
                    "200": _ok("Self-assessments.", ANY_OBJECT),
                    **_errors(401),
                },
            },
            "post": {
                "summary": "Rate yourself on a skill (0 not yet … 3 can teach it).",
                "security": SECURED,
                "requestBody": _body(
                    _object(
                        {
                            "skill_id": STRING,
                            "level": {"type": "integer", "minimum": 0, "maximum": 3},
                            "note": STRING,
                        },
                        ("skill_id", "level"),
                    )
                ),
                "responses": {
                    "201": _ok("Stored.", ANY_OBJECT),
                    **_errors(400, 401, 404, 415),
                },
            },
        },
        "/progress": {
            "get": {
                "summary": "Per-skill retention, reviews per day, forecast, "
                "recent mistakes.",
                "security": SECURED,
                "responses": {
                    "200": _ok(
                        "Progress.",
                        _object({"reviews_total": INTEGER}, ("reviews_total",)),
                    ),
                    **_errors(401),
                },
            }
        },
        "/settings": {
            "get": {
                "summary": "Your learner settings.",
                "security": SECURED,
                "responses": {
                    "200": _ok("Settings.", _ref("Settings")),
                    **_errors(401),
                },
            },
            "patch": {
                "summary": "Change some settings (unknown keys are refused).",
                "security": SECURED,
                "requestBody": _body(_ref("Settings")),
                "responses": {
                    "200": _ok("Updated.", _ref("Settings")),
                    **_errors(400, 401, 415),
                },
            },
        },
        **_class_paths(),
        **recovery_paths(),
        **_export_paths(),
        "/openapi.json": {
            "get": {
                "summary": "This document.",
                "security": [],
                "responses": {"200": _ok("The OpenAPI document.", ANY_OBJECT)},
            }
        },
    }
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "quizsvc API",
            "version": __version__,
            "description": "Spaced-repetition drills for computing transformer "
            "attention by hand. Errors are {error, message}.",
        },
        "servers": [{"url": "/api/v1"}],
        "security": SECURED,
        "paths": paths,
        "components": {
            "securitySchemes": {
                "session": {"type": "apiKey", "in": "cookie", "name": "session"},
                "bearer": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "A personal API token from Settings.",
                },
            },
            "schemas": {
                "Error": _object(
                    {"error": STRING, "message": STRING}, ("error", "message")
                ),
                "DrillItem": _object(
                    {
                        "item_id": STRING,
                        "type": STRING,
                        "prompt": STRING,
                        "options": {
                            "type": "array",
                            "items": _object({"id": STRING, "text": STRING}),
                        },
                        "steps": {
                            "type": "array",
                            "items": _object({"id": STRING, "text": STRING}),
                        },
                        "problem": ANY_OBJECT,
                        "note_id": STRING,
                        # answers given today + 1, and answers planned today
                        "position": INTEGER,
                        "total": INTEGER,
                        "repeat": BOOLEAN,
                    },
                    ("item_id", "type", "prompt", "note_id"),
                ),
                "AnswerResult": _object(
                    {
                        "review_id": INTEGER,
                        "item_id": STRING,
                        "correct": BOOLEAN,
                        "score": {"type": ["number", "null"]},
                        "rating": STRING,
                        "verdict": ANY_OBJECT,
                        "requires_explanation": BOOLEAN,
                        "next_due": STRING,
                        "option_order": {
                            "type": ["array", "null"],
                            "items": STRING,
                        },
                        "replayed": BOOLEAN,
                        "explanation": STRING,
                        "note_id": STRING,
                        "next": {
                            "description": "After a right answer, the next item, "
                            "already open (what drill/next now shows), or "
                            "{done: true, ...}; null after a wrong answer (explain "
                            'it first) or when the request said "next": false.',
                            "oneOf": [
                                _ref("DrillItem"),
                                ANY_OBJECT,
                                {"type": "null"},
                            ],
                        },
                    },
                    ("review_id", "correct", "requires_explanation", "next_due"),
                ),
                "Problem": _object(
                    {
                        "id": STRING,
                        "kind": STRING,
                        "level": INTEGER,
                        "seed": INTEGER,
                        "given": ANY_OBJECT,
                        "ask": {"type": "array", "items": ANY_OBJECT},
                        "precision": INTEGER,
                        "prompt": BILINGUAL,
                    }
                ),
                "Verdict": _object(
                    {
                        "correct": BOOLEAN,
                        "score": NUMBER,
                        "steps": {"type": "array", "items": ANY_OBJECT},
                        "misconception": {"type": ["string", "null"]},
                        "feedback": BILINGUAL,
                        "format_errors": {"type": "array", "items": ANY_OBJECT},
                    }
                ),
                "Settings": _object(
                    {
                        "desired_retention": NUMBER,
                        "new_per_day": INTEGER,
                        "reviews_per_day": INTEGER,
                        "rollover_hour": INTEGER,
                        "timezone": STRING,
                        "two_button_mode": BOOLEAN,
                        "language": {"type": "string", "enum": ["zh-CN", "en"]},
                    }
                ),
            },
        },
    }


def _class_id_parameter() -> list[dict[str, Any]]:
    return [{"name": "class_id", "in": "path", "required": True, "schema": INTEGER}]


def _class_paths() -> dict[str, Any]:
    """Classes: teachers create them and read rosters; learners join and leave."""
    nullable = {"type": ["string", "null"]}
    created = _object(
        {
            "id": INTEGER,
            "name": STRING,
            "term": nullable,
            "timezone": STRING,
            "join_code": STRING,
            "join_url": STRING,
        },
        ("id", "name", "join_code", "join_url"),
    )
    listed = _object(
        {
            "id": INTEGER,
            "name": STRING,
            "term": nullable,
            "timezone": STRING,
            "role": {"type": "string", "enum": ["learner", "teacher", "admin"]},
            "join_code": {"type": "string", "description": "Teachers only."},
            "join_url": {"type": "string", "description": "Teachers only."},
            "joining_open": BOOLEAN,
            "learners": INTEGER,
        },
        ("id", "name", "role"),
    )
    membership = _object(
        {
            "class_id": INTEGER,
            "name": STRING,
            "student_number": nullable,
            "display_name": nullable,
            "joined_at": STRING,
            "share_history": {
                "type": "boolean",
                "description": "False: teachers see answers from joined_at on.",
            },
        }
    )
    learner = _object(
        {
            "user_id": INTEGER,
            "username": STRING,
            "name": STRING,
            "student_number": nullable,
            "joined_at": STRING,
            "last_active": nullable,
            "streak": INTEGER,
            "reviews_7d": INTEGER,
            "reviews_30d": INTEGER,
            "reviews_in_period": INTEGER,
            "accuracy": {"type": ["number", "null"]},
            "overdue": INTEGER,
            "cards": INTEGER,
            "mean_recall": {"type": ["number", "null"]},
        }
    )
    return {
        "/classes": {
            "get": {
                "summary": "The classes you teach or learn in (an admin: all).",
                "security": SECURED,
                "responses": {
                    "200": _ok(
                        "Classes.",
                        _object({"classes": {"type": "array", "items": listed}}),
                    ),
                    **_errors(401),
                },
            },
            "post": {
                "summary": "Create a class (teacher and admin accounts).",
                "security": SECURED,
                "requestBody": _body(
                    _object(
                        {
                            "name": STRING,
                            "term": STRING,
                            "timezone": {
                                "type": "string",
                                "description": "IANA name; Asia/Shanghai if left out.",
                            },
                        },
                        ("name",),
                    )
                ),
                "responses": {
                    "201": _ok("Created; you teach it.", created),
                    **_errors(400, 401, 403, 415),
                },
            },
        },
        "/classes/{class_id}/join-code": {
            "post": {
                "summary": "Replace the join code; the old one stops working.",
                "security": SECURED,
                "parameters": _class_id_parameter(),
                "responses": {
                    "200": _ok(
                        "The new code.",
                        _object(
                            {"id": INTEGER, "join_code": STRING, "join_url": STRING}
                        ),
                    ),
                    **_errors(401, 404),
                },
            }
        },
        "/classes/join": {
            "post": {
                "summary": "Join a class with its code, as a learner.",
                "security": SECURED,
                "requestBody": _body(
                    _object(
                        {
                            "code": STRING,
                            "student_number": STRING,
                            "display_name": STRING,
                            "share_history": BOOLEAN,
                        },
                        ("code",),
                    )
                ),
                "responses": {
                    "201": _ok("Joined.", membership),
                    **_errors(400, 401, 404, 409, 415, 429),
                },
            }
        },
        "/classes/{class_id}/membership": {
            "patch": {
                "summary": "Choose whether teachers see answers from before joining.",
                "security": SECURED,
                "parameters": _class_id_parameter(),
                "requestBody": _body(
                    _object({"share_history": BOOLEAN}, ("share_history",))
                ),
                "responses": {
                    "200": _ok("The membership.", membership),
                    **_errors(400, 401, 404, 415),
                },
            },
            "delete": {
                "summary": "Leave a class; its teachers lose access at once.",
                "security": SECURED,
                "parameters": _class_id_parameter(),
                "responses": {
                    "200": _ok(
                        "Left.", _object({"class_id": INTEGER, "left": BOOLEAN})
                    ),
                    **_errors(401, 404),
                },
            },
        },
        "/classes/{class_id}/roster": {
            "put": {
                "summary": "Replace the roster with a 学号,姓名 file (all or nothing).",
                "description": "The body is the file itself: UTF-8 (with or "
                "without BOM), UTF-16 or GB18030/GBK, comma- or tab-separated. "
                "Errors name each bad line.",
                "security": SECURED,
                "parameters": _class_id_parameter(),
                "requestBody": {
                    "required": True,
                    "content": {"text/csv": {"schema": {"type": "string"}}},
                },
                "responses": {
                    "200": _ok(
                        "Imported.",
                        _object(
                            {
                                "class_id": INTEGER,
                                "rows": INTEGER,
                                "encoding": {
                                    "type": "string",
                                    "enum": ["utf-8", "utf-8-sig", "utf-16", "gb18030"],
                                },
                                "delimiter": {
                                    "type": "string",
                                    "enum": ["comma", "tab"],
                                },
                                "names_filled": INTEGER,
                            }
                        ),
                    ),
                    **_errors(400, 401, 404, 415),
                },
            },
            "get": {
                "summary": "The roster, each entry joined, not joined or mismatched.",
                "security": SECURED,
                "parameters": _class_id_parameter(),
                "responses": {
                    "200": _ok(
                        "The roster.",
                        _object(
                            {
                                "class_id": INTEGER,
                                "entries": {
                                    "type": "array",
                                    "items": _object(
                                        {
                                            "student_number": STRING,
                                            "name": STRING,
                                            "status": {
                                                "type": "string",
                                                "enum": [
                                                    "joined",
                                                    "not_joined",
                                                    "name_mismatch",
                                                ],
                                            },
                                            "user_id": {"type": ["integer", "null"]},
                                            "username": nullable,
                                            "member_name": nullable,
                                            "last_answer_at": nullable,
                                            "idle_this_week": BOOLEAN,
                                        }
                                    ),
                                },
                            }
                        ),
                    ),
                    **_errors(401, 404),
                },
            },
        },
        "/classes/{class_id}/learners": {
            "get": {
                "summary": "The class's learners with their summary figures.",
                "security": SECURED,
                "parameters": _class_id_parameter(),
                "responses": {
                    "200": _ok(
                        "The roster.",
                        _object(
                            {
                                "class_id": INTEGER,
                                "learners": {"type": "array", "items": learner},
                            }
                        ),
                    ),
                    **_errors(401, 404),
                },
            }
        },
    }


def _query(name: str, schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {"name": name, "in": "query", "schema": schema, "description": description}


def _file(description: str, *media_types: str) -> dict[str, Any]:
    return {
        "description": description,
        "headers": {
            "Content-Disposition": {
                "description": "attachment; filename=ASCII name; "
                "filename*=UTF-8''the class's name (RFC 6266)",
                "schema": STRING,
            }
        },
        # A JSON download is one document; the other formats are text or bytes.
        "content": {
            media: {
                "schema": {
                    "type": "object" if media == "application/json" else "string"
                }
            }
            for media in media_types
        },
    }


def _export_paths() -> dict[str, Any]:
    """Exports: a class's files for its teachers, a learner's own history."""
    from quizsvc.exports.options import KINDS
    from quizsvc.services.grades import RULES

    # An empty field (a form left blank) means the default: no bound, csv.
    date = {"anyOf": [{"type": "string", "format": "date"}, {"enum": [""]}]}
    dates = [
        _query("from", date, "First day, in the class's time zone (empty: open)."),
        _query(
            "to", date, "Last day (included), in the class's time zone (empty: open)."
        ),
    ]
    return {
        "/classes/{class_id}/exports/{kind}": {
            "get": {
                "summary": "Download a class export (its teachers and admins).",
                "description": "Streamed. reviews: one row per review; summary: "
                "one row per learner; canvas: Canvas's gradebook import; "
                "gradebook: student number, name and score, one row per roster "
                "entry or learner; xapi: xAPI 1.0.3 statements; workbook: "
                "reviews, summary and gradebook as the sheets of one XLSX. CSV "
                "is UTF-8 with a BOM, CRLF, and an apostrophe before text that "
                "starts like a formula (not in Canvas's student columns). Bad "
                "input is a 400 before any byte of the file.",
                "security": SECURED,
                "parameters": [
                    *_class_id_parameter(),
                    {
                        "name": "kind",
                        "in": "path",
                        "required": True,
                        "schema": {"type": "string", "enum": list(KINDS)},
                    },
                    _query(
                        "format",
                        {"type": "string", "enum": ["csv", "xlsx", "jsonl", ""]},
                        "csv (default, also when empty), xlsx or jsonl; "
                        "xapi is jsonl only, workbook xlsx only, canvas csv only, "
                        "gradebook csv or xlsx.",
                    ),
                    *dates,
                    _query(
                        "rule",
                        {"type": "string", "enum": [*RULES, ""]},
                        "canvas, gradebook: accuracy (share of right answers to "
                        "the lesson's items in the dates; default, also when "
                        "empty), retention "
                        "(mean predicted recall of the lesson's skills on "
                        "retention_date) or recall_now (the same now).",
                    ),
                    _query(
                        "retention_date",
                        date,
                        "canvas, gradebook, rule retention: the day recall is "
                        "predicted for (from today; empty: 7 days after the "
                        "export).",
                    ),
                    _query(
                        "points", NUMBER, "canvas, gradebook: points possible (100)."
                    ),
                    _query(
                        "lesson", STRING, "canvas, gradebook: lesson id (the first)."
                    ),
                    _query(
                        "assignment",
                        STRING,
                        "canvas: the column's title (400 if Canvas would misread "
                        "it: any 'final', 'Current Score' and the like, or a "
                        "trailing ' (digits)').",
                    ),
                    _query(
                        "lang",
                        {"type": "string", "enum": ["zh-CN", "en"]},
                        "Language of the column headers.",
                    ),
                ],
                "responses": {
                    "200": _file(
                        "The file.",
                        "text/csv",
                        "application/vnd.openxmlformats-officedocument"
                        ".spreadsheetml.sheet",
                        "application/x-ndjson",
                    ),
                    **_errors(400, 401, 404),
                },
            }
        },
        "/me/export": {
            "get": {
                "summary": "Download your history (answers; JSON adds self-ratings).",
                "security": SECURED,
                "parameters": [
                    _query(
                        "format",
                        {"type": "string", "enum": ["csv", "json", ""]},
                        "csv (default, also when empty) or json.",
                    ),
                    *dates,
                ],
                "responses": {
                    "200": _file("The file.", "text/csv", "application/json"),
                    **_errors(400, 401),
                },
            }
        },
    }


@bp.get("/openapi.json")
def openapi_document():
    """Serve the OpenAPI document."""
    return build_document()
