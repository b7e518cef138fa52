"""Numeric questions: the answer, its tolerance, and the engine's recomputation."""

from __future__ import annotations

import math
from typing import Any

from quizsvc.bank.lint import mistakes_within_tolerance
from quizsvc.bank.model import is_number, within_tolerance
from quizsvc.bank.source import SourceFile
from quizsvc.parsing import ExpressionError, parse_value

# The engine quantities a numeric answer may be recomputed from, with the number
# of indices that pick one entry out of each (a single head, no batch axes).
ATTENTION_QUANTITIES = {
    "scores": 2,
    "exp_unshifted": 2,
    "exp": 2,
    "weights": 2,
    "output": 2,
    "row_max": 1,
    "denom": 1,
}


def read_numeric(file: SourceFile, entry: dict, where: tuple, prompt) -> dict | None:
    """Read a numeric item: its key, tolerance, exact value and near misses.

    The exact value comes from the engine (``[questions.attention]``) or from
    ``exact``, an expression the shared parser reads (``"128^-0.5"``). The key
    must lie within tolerance/2 of it, so the exact value and every careful
    rounding pass; and no declared near miss (the value of a classic wrong
    answer) may lie within the tolerance, or the item would accept it.
    """
    answer = entry.get("answer")
    tolerance = entry.get("tolerance")
    ok = True
    if not is_number(answer) or not math.isfinite(answer):
        file.report(
            (*where, "answer") if "answer" in entry else where,
            "a numeric question needs a finite number as 'answer'",
        )
        ok = False
    if not is_number(tolerance) or not (0 <= tolerance < math.inf):
        file.report(
            (*where, "tolerance") if "tolerance" in entry else where,
            "a numeric question needs 'tolerance' (an absolute margin ≥ 0)",
        )
        ok = False
    near_misses = _read_values(file, entry, (*where, "near_misses"))
    exact = _read_exact(file, entry, where)
    if not ok or near_misses is None or exact is False:
        return None
    data = {
        "answer": float(answer),
        "tolerance": float(tolerance),
        "attention": None,
        "exact": exact,
        "near_misses": near_misses,
    }
    if "attention" in entry:
        spec = _read_attention_spec(file, entry["attention"], (*where, "attention"))
        if spec is None:
            return None
        computed = _compute(spec)
        if isinstance(computed, str):
            file.report((*where, "attention"), computed)
            return None
        if exact is not None and not math.isclose(computed, exact, rel_tol=1e-9):
            file.report(
                (*where, "exact"),
                f"exact = {exact:.6g} disagrees with the engine's "
                f"{spec['quantity']}{spec['index']} = {computed:.6g}",
            )
            return None
        data["attention"] = spec
        data["exact"] = computed
        for message in mistakes_within_tolerance(spec, answer, tolerance):
            file.warn((*where, "attention"), message)
    if not _key_fits(file, data, where):
        return None
    return data


def _key_fits(file: SourceFile, data: dict, where: tuple) -> bool:
    """Report a key far from the exact value, or a tolerance admitting a mistake."""
    answer, tolerance, exact = data["answer"], data["tolerance"], data["exact"]
    fits = True
    # Half the tolerance: then the exact value and everything near it pass.
    if exact is not None and abs(exact - answer) > tolerance / 2 + 1e-12:
        spec = data["attention"]
        source = (
            f"the engine: {spec['quantity']}{spec['index']}"
            if spec is not None
            else "the exact value:"
        )
        file.report(
            (*where, "answer"),
            f"answer {answer!r} disagrees with {source} = {exact:.6g} (allowed gap: "
            f"tolerance/2 = {tolerance / 2:g})",
        )
        fits = False
    for value in data["near_misses"]:
        if within_tolerance(value, answer, tolerance):
            file.report(
                (*where, "near_misses"),
                f"the near miss {value:.6g} lies within the tolerance {tolerance:g} "
                f"of the answer {answer:g}: the item would accept that mistake; "
                "tighten the tolerance or change the numbers",
            )
            fits = False
    return fits


def _read_exact(file: SourceFile, entry: dict, where: tuple) -> float | None | bool:
    """The item's `exact` value (None if absent; False after reporting a problem)."""
    if "exact" not in entry:
        return None
    values = _read_values(file, {"exact": [entry["exact"]]}, (*where, "exact"))
    return False if values is None else values[0]


def _read_values(file: SourceFile, entry: dict, at: tuple) -> list[float] | None:
    """Read a list of numbers or expressions (``"1/128"``) with the shared parser."""
    key = at[-1]
    raw = entry.get(key, [])
    if not isinstance(raw, list):
        file.report(at, f"{key} must be a list of numbers or expressions")
        return None
    values = []
    for item in raw:
        try:
            if isinstance(item, bool) or not isinstance(item, (int, float, str)):
                raise ExpressionError("number_expected", token=repr(item))
            value = parse_value(item)
        except ExpressionError as exc:
            file.report(at, f"{key}: {item!r} is not a number ({exc})")
            return None
        if not math.isfinite(value):
            file.report(at, f"{key}: {item!r} is not a finite number")
            return None
        values.append(value)
    return values


def _read_attention_spec(file: SourceFile, spec: Any, where: tuple) -> dict | None:
    if not isinstance(spec, dict):
        file.report(where, "attention must be a table ([questions.attention])")
        return None
    file.keys(
        spec,
        {"q", "k", "v", "mask", "causal", "scale", "temperature", "quantity", "index"},
        where,
    )
    result: dict[str, Any] = {}
    for name in ("q", "k", "v", "mask"):
        if name not in spec:
            if name != "mask":
                file.report(where, f"attention needs the matrix {name!r}")
                return None
            result[name] = None
            continue
        matrix = spec[name]
        if not (
            isinstance(matrix, list)
            and matrix
            and all(isinstance(row, list) and row for row in matrix)
            and all(is_number(x) for row in matrix for x in row)
        ):
            file.report(
                (*where, name), f"{name} must be a matrix: a list of rows of numbers"
            )
            return None
        result[name] = [[float(x) for x in row] for row in matrix]
    for flag, default in (("causal", False),):
        value = spec.get(flag, default)
        if not isinstance(value, bool):
            file.report((*where, flag), f"{flag} must be true or false")
            return None
        result[flag] = value
    for number_key, default in (("scale", None), ("temperature", 1.0)):
        value = spec.get(number_key, default)
        if value is not None and not is_number(value):
            file.report((*where, number_key), f"{number_key} must be a number")
            return None
        result[number_key] = None if value is None else float(value)
    quantity = spec.get("quantity")
    if quantity not in ATTENTION_QUANTITIES:
        file.report(
            (*where, "quantity"),
            f"quantity must be one of {', '.join(ATTENTION_QUANTITIES)}; "
            f"got {quantity!r}",
        )
        return None
    index = spec.get("index")
    if not (
        isinstance(index, list)
        and len(index) == ATTENTION_QUANTITIES[quantity]
        and all(
            isinstance(i, int) and not isinstance(i, bool) and i >= 0 for i in index
        )
    ):
        file.report(
            (*where, "index"),
            f"index must list {ATTENTION_QUANTITIES[quantity]} position(s) ≥ 0 "
            f"(0-based) into {quantity}",
        )
        return None
    result["quantity"] = quantity
    result["index"] = index
    return result


def _compute(spec: dict) -> float | str:
    """Recompute one entry with the engine; a string says what went wrong."""
    from quizsvc.engine import AttentionInputError, attention

    try:
        trace = attention(
            spec["q"],
            spec["k"],
            spec["v"],
            mask=spec["mask"],
            causal=spec["causal"],
            scale=spec["scale"],
            temperature=spec["temperature"],
        )
    except AttentionInputError as exc:
        return f"the engine refuses these inputs: {exc}"
    quantity = spec["quantity"]
    array = (
        trace.exp_unshifted()
        if quantity == "exp_unshifted"
        else getattr(trace, quantity)
    )
    index = tuple(spec["index"])
    if any(i >= n for i, n in zip(index, array.shape, strict=True)):
        return f"index {list(index)} is outside {quantity} of shape {array.shape}"
    value = float(array[index])
    if not math.isfinite(value):
        return f"{quantity}{list(index)} is {value}, not a finite number"
    return value
