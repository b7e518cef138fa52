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

from flask import Flask, has_request_context, request
from flask.json.provider import DefaultJSONProvider
from werkzeug.exceptions import BadRequest, NotFound
from werkzeug.routing import IntegerConverter

# The largest id a column of type `integer` holds on PostgreSQL (and SQLite).
MAX_ID = 2**31 - 1
# The largest integer a `bigint` column holds (practice seeds go that high).
MAX_JSON_INTEGER = 2**63 - 1
# No body the API accepts nests deeper than a matrix in an object in a list.
MAX_JSON_DEPTH = 32
_MAX_DIGITS = len(str(MAX_JSON_INTEGER))

_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


class _Bilingual:
    """Mixin for HTTP errors whose message exists in both interface languages.

    `description` is the message in the current request's language (English
    outside a request).
    """

    def __init__(self, zh: str, en: str):
        super().__init__()
        self.messages = {"zh-CN": zh, "en": en}

    @property
    def description(self) -> str:
        from quizsvc.i18n import current_language

        language = current_language() if has_request_context() else "en"
        return self.messages.get(language, self.messages["en"])


class InputRefused(_Bilingual, BadRequest):
    """A request carrying input no route accepts (400 invalid_input)."""

    code_name = "invalid_input"


class MalformedJson(_Bilingual, BadRequest):
    """A body that is not JSON at all (400 malformed_json)."""

    code_name = "malformed_json"


class NumberOutOfRange(_Bilingual, NotFound):
    """A number in the address beyond what the database stores (404)."""

    code_name = "not_found"


def check_text(value: str, where: tuple[str, str]) -> None:
    """Refuse a string holding a NUL character or a lone surrogate.

    `where` names the string in Chinese and English, e.g. ("字段 x", "field x").
    """
    match = _UNSTORABLE.search(value)
    if match is None:
        return
    zh, en = where
    if match.group() == "\x00":
        raise InputRefused(
            f"{zh}含有空字符（\\u0000），无法保存。",
            f"{en} contains a NUL character (\\u0000), which cannot be stored.",
        )
    code = f"\\u{ord(match.group()):04x}"
    raise InputRefused(
        f"{zh}含有单独的 UTF-16 代理码元（{code}），不是有效文本。",
        f"{en} contains a lone UTF-16 surrogate ({code}), which is not text.",
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
            f"JSON 数字 {literal[:24]} 太大。",
            f"The JSON number {literal[:24]} is too large.",
        )
    return number


def _parse_constant(name: str) -> Any:
    raise InputRefused(f"{name} 不是 JSON 值。", f"{name} is not a JSON value.")


def _where(key: str | None) -> tuple[str, str]:
    if key is None:
        return "JSON 正文中的值", "A value in the JSON body"
    shown = key[:40]
    return f"字段 {shown} ", f"The field {shown}"


def _check_tree(document: Any) -> None:
    """Walk a parsed document without recursion: depth, strings, keys, integers."""
    # Each entry: a value, its depth, and the key of the nearest object above.
    pending: list[tuple[Any, int, str | None]] = [(document, 1, None)]
    while pending:
        value, depth, key = pending.pop()
        if isinstance(value, str):
            check_text(value, _where(key))
        elif isinstance(value, int) and abs(value) > MAX_JSON_INTEGER:
            zh, en = _where(key)
            raise InputRefused(
                f"{zh}的数字超出范围（整数的绝对值最大为 {MAX_JSON_INTEGER}）。",
                f"{en} is out of range (whole numbers go up to {MAX_JSON_INTEGER}).",
            )
        elif isinstance(value, dict | list):
            if depth > MAX_JSON_DEPTH:
                raise _too_deep()
            if isinstance(value, dict):
                for name, item in value.items():
                    check_text(name, ("JSON 正文中的键", "A key in the JSON body"))
                    pending.append((item, depth + 1, name))
            else:
                pending.extend((item, depth + 1, key) for item in value)


def _too_deep() -> InputRefused:
    return InputRefused(
        f"JSON 正文的嵌套超过 {MAX_JSON_DEPTH} 层。",
        f"The JSON body nests deeper than {MAX_JSON_DEPTH} levels.",
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
        raise MalformedJson(
            "JSON 正文不是有效的 UTF-8。", "The JSON body is not valid UTF-8."
        ) from None
    except json.JSONDecodeError as exc:
        raise MalformedJson(
            f"正文不是有效的 JSON：{exc}", f"The body is not valid JSON: {exc}"
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
                f"地址中的数字 {value[:24]} 太大（最大为 {self.largest}），"
                "这里什么也没有。",
                f"The number {value[:24]} in the address is too large (at most "
                f"{self.largest}); there is nothing here.",
            )
        return number


def refuse_hostile_input() -> None:
    """Check query arguments, form fields and a JSON body before the view runs."""
    for values in (request.args, request.form):
        for name, value in values.items(multi=True):
            shown = name[:40].replace("\x00", "")
            check_text(name, ("字段名", "A field name"))
            check_text(value, (f"字段 {shown}", f"The field {shown}"))
    if request.is_json and request.get_data(cache=True):
        # Parsed (and cached) here, so a hostile body is refused even by a
        # route that would answer 401 or 405 before reading it.
        request.get_json(silent=False)


def init_app(app: Flask) -> None:
    """Use the strict JSON provider, the capped `int` converter and the checks."""
    app.json = StrictJSONProvider(app)
    app.url_map.converters["int"] = IdConverter
    app.before_request(refuse_hostile_input)
