"""xAPI 1.0.3 statements for reviews: what a learning record store (LRS) reads.

One statement per review: "<learner> answered <item>", with the result
(success, scaled score, the response, the time taken) and the lesson as the
parent activity. Every identifier (the statement id, the actor's account
home page, the activity ids, the extension keys) derives from one IRI that
names this quizsvc, fixed for the instance (see quizsvc.exports.instance), not
from the host a request came through: the statement id is a UUID 5 of that
IRI and the review id, so exporting the same review again, from the API or the
command line, yields the same id and an LRS stores it once. The IRIs are
English and never translated. The statement `version` is left out, as the
specification asks of statement providers (the LRS fills in 1.0.0).
"""

from __future__ import annotations

import json
import math
import uuid
from datetime import datetime
from decimal import Decimal
from functools import lru_cache
from typing import Any
from urllib.parse import quote

from quizsvc import item_types
from quizsvc.parsing import parse_scalar

ANSWERED = {
    "id": "http://adlnet.gov/expapi/verbs/answered",
    "display": {"en-US": "answered", "zh-CN": "回答了"},
}
INTERACTION = "http://adlnet.gov/expapi/activities/cmi.interaction"
LESSON_TYPE = "http://adlnet.gov/expapi/activities/lesson"
# quizsvc's item types as cmi.interaction types (each type names its own).
INTERACTION_TYPES = {
    name: item_type.xapi_interaction for name, item_type in item_types.REGISTRY.items()
}
# cmi.interaction responses list several choices or steps joined by "[,]".
_LIST_RESPONSES = {"choice", "sequencing"}


def base_iri(base_url: str) -> str:
    """The base URL with exactly one trailing slash."""
    return base_url.rstrip("/") + "/"


@lru_cache(maxsize=8)
def _namespace(base_url: str) -> uuid.UUID:
    return uuid.uuid5(uuid.NAMESPACE_URL, base_iri(base_url))


def statement_id(base_url: str, review_id: int) -> str:
    """A UUID 5 that names this review on this service, the same every export."""
    return str(uuid.uuid5(_namespace(base_url), f"review/{review_id}"))


def iso_duration(milliseconds: int) -> str:
    """An ISO 8601 duration to 0.01 s, e.g. 4200 ms -> "PT4.2S"."""
    centiseconds = round(milliseconds / 10)
    hours, rest = divmod(centiseconds, 360_000)
    minutes, rest = divmod(rest, 6_000)
    seconds = Decimal(rest) / 100
    text = "PT"
    if hours:
        text += f"{hours}H"
    if minutes:
        text += f"{minutes}M"
    if seconds or not (hours or minutes):
        text += f"{seconds.normalize():f}S"
    return text


def xapi_timestamp(moment: datetime) -> str:
    """An ISO 8601 timestamp in UTC with milliseconds and "Z"."""
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _response(interaction_type: str, answer: str) -> str | None:
    """The answer as the interaction type's response pattern has it.

    A numeric response must be a number: the answer as the answer box reads
    it (fractions, roots, full-width digits), else none at all.
    """
    if interaction_type == "numeric":
        try:
            value = parse_scalar(answer)
        except (ValueError, ArithmeticError):
            return None
        return _decimal(value) if math.isfinite(value) else None
    if interaction_type in _LIST_RESPONSES and answer.startswith("["):
        try:
            parts = json.loads(answer)
        except ValueError:
            return answer
        if isinstance(parts, list) and all(isinstance(p, str) for p in parts):
            return "[,]".join(parts)
    return answer


def _decimal(value: float) -> str:
    """A number in plain decimal notation, e.g. 0.7071067811865475, 2, 0.00001."""
    text = format(Decimal(repr(value)).normalize(), "f")
    return "0" if text in ("-0", "") else text


def review_statement(
    base_url: str,
    *,
    review_id: int,
    learner_id: int,
    learner_name: str | None,
    item_id: str,
    item_type: str,
    item_prompt: dict[str, str] | None,
    lesson_id: str,
    lesson_title: dict[str, str] | None,
    reviewed_at: datetime,
    correct: bool,
    score: float | None,
    duration_ms: int | None,
    answer: str | None,
    misconception: str | None = None,
    permalink: str | None = None,
    readable_answer: dict[str, str] | None = None,
) -> dict[str, Any]:
    """Build the xAPI statement for one review; `base_url` is the instance IRI."""
    base = base_iri(base_url)
    interaction_type = INTERACTION_TYPES.get(item_type, "other")
    definition: dict[str, Any] = {
        "type": INTERACTION,
        "interactionType": interaction_type,
        "name": {"en-US": f"Question {item_id}", "zh-CN": f"题目 {item_id}"},
    }
    if item_prompt:
        definition["description"] = _language_map(item_prompt)
    actor: dict[str, Any] = {
        "objectType": "Agent",
        "account": {"homePage": base, "name": str(learner_id)},
    }
    if learner_name:
        actor["name"] = learner_name
    result: dict[str, Any] = {"success": bool(correct), "completion": True}
    if score is not None:
        result["score"] = {"scaled": float(score), "raw": float(score), "min": 0.0,
                           "max": 1.0}  # fmt: skip
    extensions: dict[str, Any] = {}
    if answer is not None:
        response = _response(interaction_type, answer)
        if response is not None:
            result["response"] = response
        if interaction_type == "numeric" and response != answer:
            # What the learner typed, when the number had to be read from it.
            extensions[f"{base}xapi/typed-response"] = answer
    if readable_answer:
        # The response keeps the ids xAPI asks for; people read option texts,
        # step texts and matrices as rows, in each language.
        extensions[f"{base}xapi/readable-response"] = _language_map(readable_answer)
    if duration_ms is not None:
        result["duration"] = iso_duration(duration_ms)
    lesson: dict[str, Any] = {
        "objectType": "Activity",
        "id": f"{base}lessons/{quote(lesson_id, safe='')}",
        "definition": {"type": LESSON_TYPE},
    }
    if lesson_title:
        lesson["definition"]["name"] = _language_map(lesson_title)
    if misconception:
        extensions[f"{base}xapi/misconception"] = misconception
    if permalink:
        extensions[f"{base}xapi/problem"] = permalink
    context: dict[str, Any] = {
        "contextActivities": {"parent": [lesson]},
        "platform": "quizsvc",
    }
    if extensions:
        context["extensions"] = extensions
    return {
        "id": statement_id(base, review_id),
        "actor": actor,
        "verb": ANSWERED,
        "object": {
            "objectType": "Activity",
            "id": f"{base}items/{quote(item_id, safe='')}",
            "definition": definition,
        },
        "result": result,
        "context": context,
        "timestamp": xapi_timestamp(reviewed_at),
    }


def _language_map(text: dict[str, str]) -> dict[str, str]:
    # RFC 5646 tags; the bank's "en" is US English.
    return {("en-US" if key == "en" else key): value for key, value in text.items()}
