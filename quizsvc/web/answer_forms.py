"""Read a generated problem's answers from an HTML form (grid cells or a paste box).

The form names are: `cell-<ask>-<row>-<col>` for each grid cell, `paste-<ask>`
for a whole matrix pasted at once (it wins when filled), and `answer-<ask>` for
numbers, choices and shapes. The grader parses what people type; this only
gathers it, so a blank cell reaches the grader and is reported by position.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from werkzeug.datastructures import MultiDict

from quizsvc.item_types import collect_answers

__all__ = ["collect_answers", "offending_fields", "typed_values"]


def typed_values(form: MultiDict) -> dict[str, str]:
    """The raw field values, to refill the form after an error."""
    return {
        key: form.get(key, "")
        for key in form
        if key.startswith(("cell-", "paste-", "answer-", "order-"))
    }


def offending_fields(
    asks: list[dict[str, Any]],
    errors: Iterable[tuple[str, int | None, int | None]],
    form: MultiDict,
) -> list[str]:
    """Return the form fields that format errors point at, in the asks' order.

    `errors` are (ask name, row, column), 1-based as the messages count, None
    where the whole answer is at fault. A filled paste box is what was read, so
    it is the field at fault; otherwise the named cell, or the ask's first one.
    """
    named: dict[str, list[str]] = {}
    for name, row, col in errors:
        ask = next((a for a in asks if a["name"] == name), None)
        if ask is None:
            continue
        if ask["format"] not in ("matrix", "boolean_matrix"):
            field = f"answer-{name}"
        elif form.get(f"paste-{name}", "").strip():
            field = f"paste-{name}"
        else:
            rows, cols = ask["shape"]
            i = min(max((row or 1) - 1, 0), rows - 1)
            j = min(max((col or 1) - 1, 0), cols - 1)
            field = f"cell-{name}-{i}-{j}"
        if field not in named.setdefault(name, []):
            named[name].append(field)
    return [field for ask in asks for field in named.get(ask["name"], [])]
