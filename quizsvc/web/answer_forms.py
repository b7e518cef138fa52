"""Read a generated problem's answers from an HTML form (grid cells or a paste box).

The form names are: `cell-<ask>-<row>-<col>` for each grid cell, `paste-<ask>`
for a whole matrix pasted at once (it wins when filled), and `answer-<ask>` for
numbers, choices and shapes. The grader parses what people type; this only
gathers it, so a blank cell reaches the grader and is reported by position.
"""

from __future__ import annotations

from typing import Any

from werkzeug.datastructures import MultiDict


def collect_answers(form: MultiDict, asks: list[dict[str, Any]]) -> dict[str, Any]:
    """Return {ask name: typed answer} for the asks the learner filled in."""
    answers: dict[str, Any] = {}
    for ask in asks:
        name = ask["name"]
        if ask["format"] in ("matrix", "boolean_matrix"):
            pasted = form.get(f"paste-{name}", "").strip()
            if pasted:
                answers[name] = pasted
                continue
            rows, cols = ask["shape"]
            cells = [
                [form.get(f"cell-{name}-{i}-{j}", "").strip() for j in range(cols)]
                for i in range(rows)
            ]
            if ask["format"] == "boolean_matrix":
                # Checkboxes send nothing when unchecked: absent means "hidden".
                answers[name] = [
                    ["1" if cell else "0" for cell in row] for row in cells
                ]
            elif any(cell for row in cells for cell in row):
                answers[name] = cells
        else:
            value = form.get(f"answer-{name}", "").strip()
            if value:
                answers[name] = value
    return answers


def typed_values(form: MultiDict) -> dict[str, str]:
    """The raw field values, to refill the form after an error."""
    return {
        key: form.get(key, "")
        for key in form
        if key.startswith(("cell-", "paste-", "answer-", "order-"))
    }
