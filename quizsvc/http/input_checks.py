"""Hostile input is refused where every request passes, before any view runs.

Every JSON body is read by one strict parser (`StrictJSONProvider`), and every
form field and query argument is checked by one before-request hook, so no
route needs a special case:

- JSON nested deeper than `MAX_JSON_DEPTH`, `NaN`/`Infinity`, numbers that
  overflow a float, and integers outside a 64-bit column are a 400;
- a NUL character or a lone UTF-16 surrogate in any string (or key) is a 400:
  PostgreSQL refuses NUL in text and neither database can store a surrogate,
  so both backends give the same answer;
- ids in URLs are capped at `MAX_ID` (PostgreSQL's `integer`) by the default
  `int` converter, so a huge id is a 404, not a database error.

Refusals are `werkzeug` 400s with a message and the code `invalid_input`,
which the one error handler turns into JSON or a page.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from flask import Flask, request
from flask.json.provider import DefaultJSONProvider
from werkzeug.routing import IntegerConverter

from quizsvc.errors import N_, Message
from quizsvc.http.errors import RefusedRequest

# The largest id a column of type `integer` holds on PostgreSQL (and SQLite).
MAX_ID = 2**31 - 1
# The largest integer a `bigint` column holds (practice seeds go that high).
MAX_JSON_INTEGER = 2**63 - 1
# No body the API accepts nests deeper than a matrix in an object in a list.
MAX_JSON_DEPTH = 32
_MAX_DIGITS = len(str(MAX_JSON_INTEGER))

_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


class InputRefused(RefusedRequest):
    """A request carrying input no route accepts (400 invalid_input)."""

    code = 400
    code_name = "invalid_input"


class MalformedJson(RefusedRequest):
    """A body that is not JSON at all (400 malformed_json)."""

    code = 400
    code_name = "malformed_json"


class NumberOutOfRange(RefusedRequest):
    """A number in the address beyond what the database stores (404)."""

    code = 404
    code_name = "not_found"


def check_text(value: str, where: Message) -> None:
    """Refuse a string holding a NUL character or a lone surrogate.

    `where` names the string, e.g. Message(N_("The field %(name)s"), name="x").
    """
    match = _UNSTORABLE.search(value)
    if match is None:
        return
    if match.group() == "\x00":
        raise InputRefused(
            N_("%(where)s contains a NUL character (\\u0000), which cannot be stored."),
            where=where,
        )
    raise InputRefused(
        N_("%(where)s contains a lone UTF-16 surrogate (%(code)s), which is not text."),
        where=where,
        code=f"\\u{ord(match.group()):04x}",
    )


def _parse_int(literal: str) -> int:
    # Python refuses to convert more than 4,300 digits; anything this long is
    # out of range anyway, and is reported as such by _check_tree.
    if len(literal.lstrip("-")) > _MAX_DIGITS:
        return MAX_JSON_INTEGER + 1
    return int(literal)


def _parse_float(literal: str) -> float:
    number = float(literal)
    if not math.isfinite(number):
        raise InputRefused(
            N_("The JSON number %(number)s is too large."), number=literal[:24]
        )
    return number


def _parse_constant(name: str) -> Any:
    raise InputRefused(N_("%(name)s is not a JSON value."), name=name)


def _where(key: str | None) -> Message:
    if key is None:
        return Message(N_("A value in the JSON body"))
    return Message(N_("The field %(name)s"), name=key[:40])


def _check_tree(document: Any) -> None:
    """Walk a parsed document without recursion: depth, strings, keys, integers."""
    # Each entry: a value, its depth, and the key of the nearest object above.
    pending: list[tuple[Any, int, str | None]] = [(document, 1, None)]
    while pending:
        value, depth, key = pending.pop()
        if isinstance(value, str):
            check_text(value, _where(key))
        elif isinstance(value, int) and abs(value) > MAX_JSON_INTEGER:
            raise InputRefused(
                N_("%(where)s is out of range (whole numbers go up to %(most)d)."),
                where=_where(key),
                most=MAX_JSON_INTEGER,
            )
        elif isinstance(value, dict | list):
            if depth > MAX_JSON_DEPTH:
                raise _too_deep()
            if isinstance(value, dict):
                for name, item in value.items():
                    check_text(name, Message(N_("A key in the JSON body")))
                    pending.append((item, depth + 1, name))
            else:
                pending.extend((item, depth + 1, key) for item in value)


def _too_deep() -> InputRefused:
    return InputRefused(
        N_("The JSON body nests deeper than %(depth)d levels."), depth=MAX_JSON_DEPTH
    )


def loads_strict(data: str | bytes) -> Any:
    """Parse a JSON body, refusing what no route accepts (raises InputRefused)."""
    try:
        document = json.loads(
            data,
            parse_int=_parse_int,
            parse_float=_parse_float,
            parse_constant=_parse_constant,
        )
    except RecursionError:
        raise _too_deep() from None
    except UnicodeDecodeError:
        raise MalformedJson(N_("The JSON body is not valid UTF-8.")) from None
    except json.JSONDecodeError as exc:
        raise MalformedJson(
            N_(
                "The body is not valid JSON: line %(line)d, column %(column)d "
                "(%(position)d characters in)."
            ),
            line=exc.lineno,
            column=exc.colno,
            position=exc.pos,
        ) from None
    _check_tree(document)
    return document


class StrictJSONProvider(DefaultJSONProvider):
    """Flask's JSON provider, whose loading (of every request body) is strict."""

    def loads(self, s: str | bytes, **kwargs: Any) -> Any:
        return loads_strict(s)


class IdConverter(IntegerConverter):
    """The `int` URL converter, capped at the database's integer range.

    A larger number is a 404 raised here rather than werkzeug's validation
    error, which would turn into a 405 where a GET and a POST share the path.
    """

    def __init__(self, map, *args: Any, **kwargs: Any) -> None:  # noqa: A002
        self.largest = kwargs.pop("max", MAX_ID)
        super().__init__(map, *args, **kwargs)

    def to_python(self, value: str) -> int:
        number = super().to_python(value)
        if number > self.largest:
            raise NumberOutOfRange(
                N_(
                    "The number %(number)s in the address is too large (at most "
                    "%(most)d); there is nothing here."
                ),
                number=value[:24],
                most=self.largest,
            )
        return number


def refuse_hostile_input() -> None:
    """Check query arguments, form fields and a JSON body before the view runs."""
    for values in (request.args, request.form):
        for name, value in values.items(multi=True):
            shown = name[:40].replace("\x00", "")
            check_text(name, Message(N_("A field name")))
            check_text(value, Message(N_("The field %(name)s"), name=shown))
    if request.is_json and request.get_data(cache=True):
        # Parsed (and cached) here, so a hostile body is refused even by a
        # route that would answer 401 or 405 before reading it.
        request.get_json(silent=False)


def init_app(app: Flask) -> None:
    """Use the strict JSON provider, the capped `int` converter and the checks."""
    app.json = StrictJSONProvider(app)
    app.url_map.converters["int"] = IdConverter
    app.before_request(refuse_hostile_input)
