#!/usr/bin/env python3
"""Mutation check: does the test suite notice when a rule in the code is broken?

    python scripts/mutation.py                  # every mutant, one at a time
    python scripts/mutation.py --module grading # one module's mutants
    python scripts/mutation.py --list           # the mutants, without running
    python scripts/mutation.py --jobs 2 E1 D8   # chosen mutants, two at a time

Each mutant below names a file, an exact snippet of its source and the text
that replaces it. Snippets are matched by text, not by line number, so code
moving around does not shift a mutant onto another line: a snippet that no
longer occurs exactly once is reported as "stale" and left out of the score
(update or drop it). Each mutant is applied to a private copy of the tree,
never to the working tree, and the tests chosen for its module run with
`-x -q` and a fixed Hypothesis seed. A mutant is killed when they fail (the
test that killed it last time, in KILLERS, runs first as a shortcut).

Mutants marked equivalent are listed with the reason and never run. The last
line printed is `score: K/N killed (P%)`, N counting the mutants that ran.
Run it on a tree whose selected tests pass (it checks that first).
"""

# ruff: noqa: E501  (the mutant table keeps one mutant per line)
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# The tests run for each module's mutants, in order: the most specific and
# quickest first, since the first failure ends the run (-x).
TESTS = {
    "engine": [
        "test_engine",
        "test_pinned_core",
        "test_problems",
        "test_grading",
        "test_lab",
        "test_api_practice",
    ],
    "parsing": [
        "test_parsing",
        "test_strict_matrices",
        "test_reader_rules",
        "test_bank_check",
        "test_grading",
        "test_lab",
        "test_api_practice",
    ],
    "bank": [
        "test_bank_check",
        "test_bank_numeric",
        "test_bank_lessons",
        "test_bank",
        "test_reader_rules",
        "test_questions_cli",
    ],
    "grading": [
        "test_grading",
        "test_pinned_core",
        "test_problems",
        "test_api_practice",
        "test_web_practice",
    ],
    "problems": [
        "test_problems",
        "test_pinned_core",
        "test_grading",
        "test_api_practice",
        "test_web_practice",
    ],
    "scheduling": [
        "test_scheduling",
        "test_pinned_core",
        "test_services_queue",
        "test_services_reviews",
        "test_fsrs",
        "test_insights",
    ],
    "web": ["test_lab", "test_api_practice", "test_web_practice"],
    "drill": [
        "test_pinned_services",
        "test_api_drill",
        "test_web_drill",
        "test_web_progress",
        "test_api_learner",
        "test_insights",
    ],
    "reviews": [
        "test_pinned_services",
        "test_services_reviews",
        "test_services_queue",
        "test_api_drill",
        "test_web_drill",
        "test_insights",
    ],
    "self_assessments": [
        "test_services_reviews",
        "test_api_learner",
        "test_web_assess",
    ],
    "queue": [
        "test_pinned_services",
        "test_services_queue",
        "test_api_drill",
        "test_web_drill",
        "test_services_demo",
        "test_insights",
    ],
}


def module_of(path: str) -> str:
    """The module name a mutant's file is scored under (problems/* → problems)."""
    parts = path.removeprefix("quizsvc/").removesuffix(".py").split("/")
    return parts[1] if parts[0] == "services" else parts[0]


@dataclass(frozen=True)
class Mutant:
    """One deliberate mistake: `before` in `path` becomes `after`."""

    id: str
    path: str  # below quizsvc/
    before: str
    after: str
    equivalent: str | None = None  # why no test can tell it apart
    needs_postgres: bool = False  # only concurrent row locks can show it
    retired: str | None = None  # why the behaviour it mutated no longer exists

    @property
    def module(self) -> str:
        return module_of(self.path)

    @property
    def file(self) -> str:
        return f"quizsvc/{self.path}"


def M(
    id, path, before, after, *, equivalent=None, needs_postgres=False, retired=None
) -> Mutant:
    return Mutant(id, path, before, after, equivalent, needs_postgres, retired)


# fmt: off
MUTANTS = [
    # --- the 83 mutants of the test audit of 2026-12-01 ---------------------
    M("E1", "engine.py", "scale = 1.0 / math.sqrt(d)", "scale = 1.0 / d"),
    M("E2", "engine.py", "return np.arange(tk)[None, :] <= np.arange(tq)[:, None] + offset", "return np.arange(tk)[None, :] < np.arange(tq)[:, None] + offset"),
    M("E3", "engine.py", "offset = tk - tq", "offset = 0"),
    M("E4", "engine.py", "bad |= np.isneginf(scores) & ~np.isneginf(additive)", "bad |= np.isneginf(scores)"),
    M("E5", "engine.py", "steps = attention_steps(q, k, v, additive, scale / temperature)", "steps = attention_steps(q, k, v, additive, scale * temperature)"),
    M("E6", "engine.py", "if steps.scores.shape[:-2] != batch:", "if False:"),
    M("E7", "engine.py", 'return "inf" if f > 0 else "-inf"', 'return "-inf" if f > 0 else "inf"'),
    # E8, G2, PR3: rewritten for the shared softmax (engine.shifted_exp / shifted_softmax).
    M("E8", "engine.py", "without its wrapper's cost\n        return np.exp(x - np.where(empty, 0.0, peak)), empty", "without its wrapper's cost\n        return np.exp(x - peak), empty"),
    M("E9", "engine.py", "if np.isnan(additive).any() or np.isposinf(additive).any():", "if np.isnan(additive).any():"),
    M("E10", "engine.py", "peak = x.max(axis=axis, keepdims=True)", "peak = x.max(axis=-1, keepdims=True)"),
    M("G1", "grading.py", "score = sum(cells) / len(cells)", "score = 0.0"),
    M("G2", "grading.py", "return softmax_rows(first) if first.ndim == 2 else None", "return softmax_columns(first) if first.ndim == 2 else None"),
    M("G3", "grading.py", "return np.where(first > 0.5, raw, -np.inf) if first.shape == raw.shape else None", "return np.where(first < 0.5, raw, -np.inf) if first.shape == raw.shape else None"),
    M("G4", "grading.py", "return np.array(0.0 if peaks[0] > peaks[1] else 1.0)", "return np.array(1.0 if peaks[0] > peaks[1] else 0.0)"),
    M("G5", "grading.py", "return (q @ k.T) / math.sqrt(q.shape[1])", "return (q @ k.T) / q.shape[1]",
      equivalent="dead branch: every causal problem carries mask_ignored, so the fallback never runs"),
    M("G6", "grading.py", "best = max(candidates, key=lambda i: (counts[i], -RANK[names[i]]))", "best = max(candidates, key=lambda i: (counts[i], RANK[names[i]]))"),
    M("G7", "grading.py", "for s in later\n        if s.result.answered", "for s in later\n        if False"),
    M("G8", "grading.py", "if expected and array.shape == expected[::-1]:", "if False:"),
    M("G9", "grading.py", "or text in _AXIS_ALIASES.get(choice.value, ())", "or False"),
    M("G10", "grading.py", "score = 1.0 if consistent else 0.0", "score = 0.0"),
    M("G11", "grading.py", "near |= np.isnan(a) & np.isnan(b)  # NaN on both sides (a row with no weights)", "near = near  # NaN on both sides (a row with no weights)"),
    M("G12", "grading.py", "near |= np.isnan(answer) & np.isnan(flat)", "near = near"),
    M("G13", "grading.py", "return not value.strip()", "return not value"),
    M("P1", "parsing/values.py", 'if math.isinf(value) and "inf" not in text.lower():', "if False:"),
    M("P2", "parsing/expressions.py", 'return -value if token[1] == "-" else value', "return value"),
    M("P3", "parsing/expressions.py", "exponent = self.unary()", "exponent = self.primary()"),
    M("P4", "parsing/matrices.py", "target = width if width is not None and width in widths else first", "target = first"),
    M("P5", "parsing/matrices.py", "parsed_row = parsed_row * width", "parsed_row = parsed_row * (width - 1)"),
    M("P6", "parsing/values.py", "if isinstance(token, (int, float)) and token in (0, 1):", "if isinstance(token, (int, float)):"),
    M("P7", "parsing/expressions.py", "if self.depth > MAX_EXPRESSION_DEPTH:", "if False:"),
    M("P8", "parsing/layout.py", 'or piece in ("+", "-")', "or False"),
    M("P9", "parsing/expressions.py", "elif right == 0:", "elif False:"),
    # The shared reader's rules and the strict matrix layout (issues 20 and 22).
    M("P10", "parsing/layout.py", 'cells.append(("", start))', "pass"),
    M("P11", "parsing/layout.py", "    if unclosed is not None:\n        _refuse_unclosed(", "    if False:\n        _refuse_unclosed("),
    M("P12", "parsing/layout.py", "        elif stray is None:\n            stray = index", "        elif False:\n            stray = index"),
    M("P13", "parsing/layout.py", "if not text.strip() or (between and _ROW_SEPARATOR.match(text)):", "if not text.strip() or _ROW_SEPARATOR.match(text):"),
    M("P14", "parsing/spelling.py", 'out.append("^" + (body if len(body) == 1 else f"({body})"))', "out.append(body)"),
    M("P15", "parsing/spelling.py", "            value += digit * (last_unit // 10)", "            value += digit"),
    M("P16", "parsing/spelling.py", 'text = _OVER.sub(r"(\\2)/(\\1)", text)', 'text = _OVER.sub(r"(\\1)/(\\2)", text)'),
    M("P17", "parsing/spelling.py", 'text = _TRAILING_HEDGE.sub("", _LEADING_HEDGE.sub("", text))', 'text = _LEADING_HEDGE.sub("", text)'),
    M("P18", "parsing/spelling.py", 'negative = (match.group("outer") == "-") != inner', 'negative = (match.group("outer") == "-") == inner'),
    M("P19", "parsing/expressions.py", '            tokens[index] = ("op", "*")', "            pass"),
    M("P20", "parsing/values.py", "if _DOUBLED_SIGN.search(text):", "if False:"),
    M("P21", "parsing/spelling.py", 'if unit >= last_unit:', 'if unit > last_unit:'),
    M("P22", "parsing/spelling.py", "        text = text.replace(\"{\", \"(\").replace(\"}\", \")\")", "        pass"),
    # The bank: reading, checking and linting (no bank mutants before).
    M("B1", "bank/answers.py", "correct = within_tolerance(value, target, tolerance)", "correct = abs(value - target) < tolerance"),
    M("B2", "bank/answers.py", "score = max(0.0, (hits - len(wrong)) / len(correct))", "score = hits / len(correct)"),
    M("B3", "bank/answers.py", 'if not question.data["multiple"] and len(chosen) > 1:', "if False:"),
    M("B4", "bank/answers.py", "and _parse_number_answer(answer) is None", "and True"),
    M("B5", "bank/answers.py", "if canonical_answer(head) in keys and canonical_answer(symbol) in keys:", "if canonical_answer(head) in keys or canonical_answer(symbol) in keys:"),
    M("B6", "bank/numeric.py", "if exact is not None and abs(exact - answer) > tolerance / 2 + 1e-12:", "if exact is not None and abs(exact - answer) > tolerance + 1e-12:"),
    M("B7", "bank/numeric.py", "        if within_tolerance(value, answer, tolerance):", "        if False:"),
    M("B8", "bank/items.py", "if not multiple and correct_count != 1:", "if False:"),
    M("B9", "bank/read.py", "        if question_id in draft.retired:", "        if False:"),
    M("B10", "bank/lint.py", "if correct and others and min(correct) > max(others):", "if correct and others and min(correct) >= max(others):"),
    M("B11", "bank/lint.py", "if abs(share_right - share_wrong) > ABSOLUTE_GAP:", "if False:"),
    M("B12", "bank/ideas.py", "return len(self.questions) < MIN_QUESTIONS or len(self.types) < MIN_TYPES", "return len(self.questions) < MIN_QUESTIONS"),
    M("B13", "bank/equivalence.py", "parts = parts[:-1]  # Python's trailing comma: [0, 3, 8,]", "pass"),
    M("B14", "bank/equivalence.py", "    folded = _outer_parentheses_dropped(folded)\n", ""),
    M("B15", "bank/equivalence.py", "            folded = folded.replace(part, replacement)", "            pass"),
    M("B16", "bank/equivalence.py", "        return f\"{float(part) + 0.0:.12g}\"  # 3.0 and 3. are 3, as in a list", "        return part"),
    M("B17", "bank/lint.py", "    if letters and ids != sorted(ids):", "    if False:"),
    M("S1", "scheduling.py", "if interval_days < 2.5:", "if interval_days < 3.5:"),
    M("S2", "scheduling.py", "lapsed = card.state == STATE_REVIEW and rating == Rating.AGAIN", "lapsed = rating == Rating.AGAIN"),
    M("S3", "scheduling.py", "np.floor(days, out=days)", "np.ceil(days, out=days)"),
    M("S4", "scheduling.py", "np.maximum(days, 0.0, out=days)", "days[...] = days"),
    M("S5", "scheduling.py", "if answer.score < 1.0 or answer.hint_used or answer.attempts > 1:", "if answer.score < 1.0 or answer.hint_used or answer.attempts > 2:"),
    M("S6", "scheduling.py", "typical_ms is not None and duration_ms is not None and duration_ms < typical_ms", "typical_ms is not None and duration_ms is not None and duration_ms <= typical_ms"),
    M("S7", "scheduling.py", "day = (local.replace(tzinfo=None) - timedelta(hours=rollover_hour)).date()", "day = local.replace(tzinfo=None).date()"),
    M("S8", "scheduling.py", "if card.due < day_end:", "if card.due <= now:"),
    M("S9", "scheduling.py", "capacity = max(0, min(new_remaining, limit - len(reviews)))", "capacity = max(0, new_remaining)"),
    M("S10", "scheduling.py", "ready.sort(key=lambda c: (c.retrievability, c.due, c.item_id))", "ready.sort(key=lambda c: (-c.retrievability, c.due, c.item_id))"),
    M("S11", "scheduling.py", "if entry.skill_id is None or entry.skill_id != previous", "if entry.skill_id != previous"),
    M("S12", "scheduling.py", "if all(lessons[p].complete for p in progress.prerequisites if p in lessons)", "if all(lessons[p].complete for p in progress.prerequisites)"),
    M("S13", "scheduling.py", "ease = max(SM2_MINIMUM_EASE, card.ease - 0.15)", "ease = card.ease - 0.15"),
    M("S14", "scheduling.py", "index = min(len(times) - 1, max(1, round(len(times) * (1.0 - test_fraction))))", "index = min(len(times) - 1, max(1, round(len(times) * test_fraction)))"),
    M("PR1", "problems/pipelines.py", 'if name == "k_not_transposed" and d != tk:', 'if name == "k_not_transposed" and d != tq:'),
    M("PR2", "problems/pipelines.py", 'factors = {"no_scale": 1.0, "scale_by_d": 1.0 / d, "scale_multiplied": math.sqrt(d)}', 'factors = {"no_scale": 1.0, "scale_by_d": 1.0 / d, "scale_multiplied": float(d)}'),
    M("PR3", "problems/pipelines.py", "return shifted_softmax(scores, -2, empty_weight=0.0)", "return shifted_softmax(scores, -1, empty_weight=0.0)"),
    M("PR4", "problems/pipelines.py", "return sum(1 for x in row if top - x <= 1e-9) > 1", "return sum(1 for x in row if top - x <= 1e-9) > 2"),
    M("PR5", "problems/kinds.py", "if not count:", "if False:"),
    M("PR6", "problems/draws.py", "return _TWO_64 - _TWO_64 % span", "return _TWO_64"),
    M("PR7", "problems/model.py", "return 2.5 * 10.0**-precision", "return 25 * 10.0**-precision"),
    M("PR8", "problems/__init__.py", "unit_margin = 10.0 * 10.0**-precision", "unit_margin = 1.0 * 10.0**-precision",
      equivalent="all 13 kinds x 3 levels x seeds 0-399 generate identically: no draw falls between the margins"),
    M("PR9", "problems/kinds.py", "sharper = 0.0 if tau1 < tau2 else 1.0", "sharper = 1.0 if tau1 < tau2 else 0.0"),
    M("PR10", "problems/kinds.py", "if draw != draw[:dv] * tk:  # some row differs from the first", "if True:  # some row differs from the first"),
    M("PR11", "problems/pipelines.py", "flipped = base & lower.T if causal else None", "flipped = base & ~lower if causal else None"),
    M("PR12", "problems/model.py", "self.answer[a.name].T if a.transposable else self.answer[a.name]", "self.answer[a.name]"),
    M("PR13", "problems/__init__.py", "checked = (*names, *virtual) if not layout.never else names", "checked = names"),
    M("D1", "services/drill/answering.py", "lock_learner(session, user)\n    if key is not None and (first := find_answer(session, user, key)) is not None:\n        if first.item_id", "lock_learner(session, user)\n    if False:\n        if first.item_id"),
    M("D2", "services/drill/streaks.py", "streak = 1 if -1 in days else 0", "streak = 0"),
    M("D3", "services/drill/opening.py", "if latest is None or latest.correct or latest.explanation is not None:", "if latest is None or latest.correct:"),
    M("D4", "services/drill/presentation.py", "if isinstance(detail, dict):", "if False:"),
    M("D5", "services/drill/opening.py", "opened.day_total = plan.total", "opened.day_total = plan.total - 1"),  # the open item counts itself
    M("D6", "services/drill/explanation.py", "if review.correct:", "if False:"),
    M("D7", "services/drill/explanation.py", "pending = pending_explanation(session, user)\n    if pending is not None:\n        locked", "pending = pending_explanation(session, user)\n    if False:\n        locked"),
    M("D8", "services/drill/answering.py", "if first.item_id != item_id:", "if False:"),
    # The card lock and the lookup after it became the learner lock (lock_learner).
    M("R1", "services/reviews.py", "session.execute(select(func.pg_advisory_xact_lock(LEARNER_LOCK_SPACE, user.id)))", "pass",
      needs_postgres=True),
    M("R2", "services/reviews.py", 'return rating, "learner", rating > scheduling.Rating.AGAIN, None, False', 'return rating, "learner", rating > scheduling.Rating.HARD, None, False'),
    M("R3", "services/reviews.py", "Review.correct.is_(True),", ""),
    M("R4", "services/reviews.py", "seed=scheduling.fuzz_seed(card.id, card.reps),", "seed=scheduling.fuzz_seed(card.id, card.reps + 1),"),
    M("R5", "services/reviews.py", "if problem_seed is not None and not problems.is_seed(problem_seed):", "if False:"),
    M("R6", "services/reviews.py", "explanation.body, explanation.updated_at = body, now", "explanation.updated_at = now"),
    M("R7", "services/reviews.py", "    if key is not None and (first := find_answer(session, user, key)) is not None:\n        return _replay(first, item_id)\n    item = session.get(Item, item_id)", "    item = session.get(Item, item_id)"),
    M("R8", "services/reviews.py", "if not key or len(key) > MAX_KEY_CHARS or not key.isprintable():", "if not key or len(key) > MAX_KEY_CHARS:"),
    M("R9", "services/reviews.py", "    _close_if_open(session, user, item.id)\n", ""),
    M("R10", "services/reviews.py", ".execution_options(populate_existing=True)", "",
      needs_postgres=True),
    M("Q1", "services/queue.py", "introduced = sum(row.state_before == STATE_NEW for row in today)", "introduced = sum(row.state_before != STATE_NEW for row in today)"),
    M("Q2", "services/queue.py", "Item.retired_at.is_(None),", ""),
    M("Q3", "services/queue.py", "started[row.lesson_id] += 1", "pass"),
    M("Q4", "services/queue.py", "reviews_remaining=settings.reviews_per_day - len(today),", "reviews_remaining=settings.reviews_per_day,"),
    M("Q5", "services/queue.py", "Card.due < day_end,", "Card.due < now,"),
    M("Q6", "services/queue.py", "decay = scheduling.decay_of(current_parameters(session, user))", "decay = scheduling.DEFAULT_PARAMETERS[20]",
      equivalent="one decay per learner: the retrievability order is fixed by elapsed/stability alone"),

    # --- added: more mutants where the audit sampled few ---------------------
    # The audit's circular oracle (H1) and the lab's ignored causal flag (H2).
    M("E11", "engine.py", "weights = exp / denom[..., None]", "weights = exp / (denom[..., None] + 1)"),
    M("W1", "web/lab.py", "causal=form.causal,", "causal=False,"),
    M("E12", "engine.py", "if k.shape[-1] != d:", "if False:"),
    M("E13", "engine.py", "if not (math.isfinite(temperature) and temperature > 0):", "if not math.isfinite(temperature):"),
    M("E14", "engine.py", "hidden = np.where(causal_mask(tq, tk), 0.0, -np.inf)", "hidden = np.where(causal_mask(tq, tk), -np.inf, 0.0)"),
    M("E15", "engine.py", "additive = hidden if additive is None else additive + hidden", "additive = hidden"),
    M("E16", "engine.py", "if strict and steps.undefined_rows.any():", "if False:"),
    M("E17", "engine.py", "if additive.ndim < 2:", "if False:",
      retired="a key mask (Tk,) now broadcasts like any other mask (9fbf13b): no special case left"),
    M("E18", "engine.py", "if math.isfinite(total):", "if True:"),
    M("E20", "engine.py", "if total == -math.inf:", "if False:",
      equivalent="the general path below gives the same numbers; it only costs more"),
    M("E19", "engine.py", "if not np.count_nonzero(empty):  # cheaper than .any()", "if True:"),
    M("G14", "grading.py", "1.0 if correct else min(sum(s.result.score for s in steps) / len(steps), 1.0)", "1.0 if correct else 0.0"),
    M("G15", "grading.py", "correct = not format_errors and all(s.result.correct for s in steps)", "correct = all(s.result.correct for s in steps)"),
    M("G16", "grading.py", "        if key not in names:", "        if False:"),
    M("G17", "grading.py", "matches[-1] = bool(_close(x, truth.T, problem.tolerance).all())", "matches[-1] = False"),
    M("G18", "grading.py", "return first @ v if first.ndim == 2 and first.shape[1] == v.shape[0] else None", "return first @ v * 2 if first.ndim == 2 and first.shape[1] == v.shape[0] else None"),
    M("G19", "grading.py", "near |= a == b  # the same ±inf on both sides (a hidden cell's -inf)", "near = near  # the same ±inf on both sides (a hidden cell's -inf)"),
    M("G20", "grading.py", "near |= answer == flat  # ±inf on both sides", "near = near  # ±inf on both sides"),
    M("PR14", "problems/kinds.py", "if sum(counts) == tq * tk:", "if False:"),
    M("PR15", "problems/pipelines.py", "return any(map(peak_tied, scores.reshape(-1, scores.shape[-1]).tolist()))", "return False",
      equivalent="a backstop: the kinds redraw tied rows before the pipelines run"),
    M("PR16", "problems/pipelines.py", 'factors = {"no_scale": 1.0, "scale_by_d": 1.0 / d,', 'factors = {"no_scale": 1.0, "scale_by_d": 1.0 / d**2,'),
    M("PR17", "problems/pipelines.py", 'row_visible[rows.index("mask_ignored")] = True', 'row_visible[rows.index("mask_ignored")] = full'),
    M("PR18", "problems/pipelines.py", "return values if empty is None else np.where(empty, np.nan, values)", "return values"),
    M("S15", "scheduling.py", "lowest = max(2, round(interval_days - delta))", "lowest = max(1, round(interval_days - delta))"),
    M("S16", "scheduling.py", "return min(round(uniform * (highest - lowest + 1) + lowest), maximum_interval)", "return min(round(uniform * (highest - lowest) + lowest), maximum_interval)"),
    M("S17", "scheduling.py", "return replace(card, ease=card.ease + 0.15, interval=easy)", "return replace(card, ease=card.ease + 0.1, interval=easy)"),
    M("D9", "services/drill/opening.py", "opened.day_position = len(plan.answered_items) + 1", "opened.day_position = len(plan.answered_items)"),
    M("D10", "services/drill/answering.py", '    if opened is None or opened.item_id != item_id:\n        raise Conflict(\n            N_("Item %(item)s is not open in your drill; ask', '    if opened is None:\n        raise Conflict(\n            N_("Item %(item)s is not open in your drill; ask'),
    M("D11", "services/drill/explanation.py", 'if question.type != "recall":', "if False:"),
    M("D12", "services/drill/answering.py", "if not self.requires_explanation:\n            data.update(reveal(self.question, lang))", "if True:\n            data.update(reveal(self.question, lang))"),
    M("D13", "services/drill/answering.py", "return not self.review.correct and self.review.explanation is None", "return not self.review.correct"),
    M("D15", "services/drill/answering.py", "if verdict.format_errors:\n            labels =", "if False:\n            labels ="),
    M("D16", "services/drill/answering.py", 'if check.detail.get("invalid"):', "if False:"),
    M("D17", "services/drill/answering.py", 'return graded, None, verdict, {"misconception": named[0]}', 'return graded, None, verdict, {"misconception": None}'),
    M("D18", "services/drill/explanation.py", "        locked.add(question_of(session.get(Item, opened.item_id)).lesson_note)", "        pass"),
    M("D19", "services/drill/streaks.py", "        offset += 1", "        offset += 2"),
    M("D20", "services/drill/streaks.py", ".where(Review.user_id == user.id, Review.reviewed_at >= start)", ".where(Review.user_id == user.id)"),
    M("D21", "services/drill/answering.py", "replayed=True,", "replayed=False,"),
    M("D22", "services/drill/answering.py", "if review.problem_kind is not None:\n        problem = problems.generate(", "if False:\n        problem = problems.generate("),
    M("D23", "services/drill/opening.py", "opened = open_item(session, user, entry.item_id, now=now, **problem_ref)", "opened = open_item(session, user, entry.item_id, now=now)"),
    M("R11", "services/reviews.py", 'if review is None or review.user_id != user.id:\n        raise NotFound(N_("You have no answer %(id)s."), id=review_id)', 'if review is None:\n        raise NotFound(N_("You have no answer %(id)s."), id=review_id)'),
    M("R12", "services/reviews.py", "if len(body) > MAX_EXPLANATION_CHARS:", "if False:"),
    M("R20", "services/reviews.py", "if len(body) < MIN_EXPLANATION_CHARS:", "if False:"),
    M("R13", "services/reviews.py", 'if review.correct:\n        raise InvalidInput(N_("Explanations are written about wrong answers."))', 'if False:\n        raise InvalidInput(N_("Explanations are written about wrong answers."))'),
    M("R14", "services/reviews.py", "not _is_int(duration_ms) or not 0 <= duration_ms <= MAX_DURATION_MS", "not _is_int(duration_ms)"),
    M("R15", "services/reviews.py", 'if item is None:\n        raise NotFound(N_("There is no item \'%(item)s\'."), item=item_id)\n    review', 'if False:\n        raise NotFound(N_("There is no item \'%(item)s\'."), item=item_id)\n    review'),
    M("R16", "services/reviews.py", "if item is None or item.retired_at is not None:", "if item is None:"),
    M("R17", "services/reviews.py", "if opened is not None and opened.item_id == item_id:", "if opened is not None:"),
    M("R18", "services/self_assessments.py", "if not _is_int(level) or not 0 <= level <= 3:", "if not _is_int(level):"),
    M("R19", "services/reviews.py", "    card.lapses = state.lapses\n", ""),
    M("Q7", "services/queue.py", "            Review.reviewed_at >= day_start,\n", ""),
    M("Q8", "services/queue.py", "new_remaining=settings.new_per_day - introduced,", "new_remaining=settings.new_per_day,"),
    M("Q9", "services/queue.py", "totals[row.lesson_id] += 1", "pass"),
    M("Q10", "services/queue.py", "            Card.user_id == user.id,\n", ""),
    M("Q11", "services/queue.py", ".outerjoin(Card, and_(Card.item_id == Item.id, Card.user_id == user.id))", ".outerjoin(Card, Card.item_id == Item.id)"),
]
# fmt: on


# The test that killed each mutant last time, tried first: when it fails the
# mutant is killed without running the rest. It is a shortcut, never the only
# judge: when it passes (or no longer exists), the module's tests all run.
KILLERS = {
    "E1": "tests/test_engine.py::test_lesson_worked_example",
    "E2": "tests/test_engine.py::test_causal_aligns_to_the_last_query",
    "E3": "tests/test_engine.py::test_causal_aligns_to_the_last_query",
    "E4": "tests/test_engine.py::test_fully_masked_row_is_nan_and_marked",
    "E5": "tests/test_engine.py::test_temperature_limits_are_argmax_and_uniform",
    "E7": "tests/test_problems.py::test_recorded_problems_come_out_the_same[attention-7-2-]",
    "E8": "tests/test_engine.py::test_fully_masked_row_is_nan_and_marked",
    "E19": "tests/test_pinned_core.py::test_an_empty_slice_exp_stays_zero_beside_infinite_or_nan_peaks",
    "E9": "tests/test_engine.py::test_bad_masks_raise_mask_error[mask3-+inf]",
    "E10": "tests/test_engine.py::test_softmax_matches_definition_and_shift",
    "G1": "tests/test_grading.py::test_a_slip_carried_forward_earns_the_later_steps",
    "G2": "tests/test_grading.py::test_each_misconception_is_named_and_not_marked_correct",
    "G3": "tests/test_grading.py::test_each_misconception_is_named_and_not_marked_correct",
    "G4": "tests/test_grading.py::test_a_change_beyond_the_tolerance_is_wrong",
    "G7": "tests/test_grading.py::test_a_later_step_wrong_on_its_own_terms_is_not_praised",
    "G8": "tests/test_grading.py::test_each_misconception_is_named_and_not_marked_correct",
    "G9": "tests/test_grading.py::test_shapes_may_be_typed_with_sizes_or_axis_names",
    "G12": "tests/test_grading.py::test_the_exact_answer_scores_one",
    "P1": "tests/test_parsing.py::test_bad_expressions_say_why",
    "P2": "tests/test_parsing.py::test_expressions_evaluate_as_written[2^-1-0.5]",
    "P3": "tests/test_parsing.py::test_expressions_evaluate_as_written[2^-1-0.5]",
    "P4": "tests/test_parsing.py::test_a_row_written_as_one_undefined_fills_the_row",
    "P5": "tests/test_parsing.py::test_a_row_written_as_one_undefined_fills_the_row",
    "P6": "tests/test_parsing.py::test_a_flag_must_be_zero_or_one",
    "P7": "tests/test_parsing.py::test_bad_expressions_say_why",
    "P8": "tests/test_parsing.py::test_matlab_spacing_decides_between_one_entry_and_two",
    "P9": "tests/test_parsing.py::test_bad_expressions_say_why",
    "P10": "tests/test_strict_matrices.py::test_an_emptied_cell_is_named_by_its_row_and_column",
    "P11": "tests/test_strict_matrices.py::test_any_missing_or_extra_bracket_is_a_format_error_with_a_place",
    "P12": "tests/test_strict_matrices.py::test_any_missing_or_extra_bracket_is_a_format_error_with_a_place",
    "B2": "tests/test_bank.py::test_multiple_choice_scores_right_minus_wrong",
    "B6": "tests/test_bank_numeric.py::test_validate_refuses_a_key_far_from_the_exact_value",
    "B7": "tests/test_bank_numeric.py::test_validate_refuses_a_tolerance_that_admits_a_near_miss",
    "B10": "tests/test_bank.py::test_the_mini_bank_has_no_warnings",
    "B11": "tests/test_bank_lessons.py::test_absolute_words_on_wrong_options_only_are_a_cue",
    "B12": "tests/test_bank_lessons.py::test_an_idea_with_enough_questions_of_one_type_is_still_thin",
    "B17": "tests/test_bank_lessons.py::test_option_ids_out_of_order_are_a_warning",
    "P13": "tests/test_strict_matrices.py::test_each_kind_of_format_error_says_where",
    "P14": "tests/test_reader_rules.py::test_a_superscript_is_a_power_never_more_digits",
    "P15": "tests/test_reader_rules.py::test_chinese_numerals_read_as_their_number",
    "P16": "tests/test_reader_rules.py::test_chinese_numerals_read_as_their_number",
    "P17": "tests/test_reader_rules.py::test_hedges_around_a_rounded_number_are_ignored",
    "P18": "tests/test_reader_rules.py::test_code_spellings_of_infinity_keep_their_sign",
    "P19": "tests/test_reader_rules.py::test_grouping_and_spoken_operators_read_as_arithmetic",
    "P20": "tests/test_parsing.py::test_bad_expressions_say_why",
    "P21": "tests/test_reader_rules.py::test_numerals_that_spell_no_number_are_unreadable_not_another_number",
    "P22": "tests/test_reader_rules.py::test_grouping_and_spoken_operators_read_as_arithmetic",
    "B1": "tests/test_bank_check.py::test_numeric_items_read_a_count_with_its_measure_word",
    "B3": "tests/test_bank.py::test_unreadable_choices_ask_again",
    "B4": "tests/test_bank_check.py::test_right_spellings_pass_and_near_misses_fail",
    "B5": "tests/test_bank_check.py::test_right_spellings_pass_and_near_misses_fail",
    "B8": "tests/test_bank.py::test_each_problem_is_reported_at_its_line",
    "B9": "tests/test_bank.py::test_each_problem_is_reported_at_its_line",
    "B13": "tests/test_bank_check.py::test_right_spellings_pass_and_near_misses_fail",
    "B14": "tests/test_bank_check.py::test_right_spellings_pass_and_near_misses_fail",
    "B15": "tests/test_bank_check.py::test_right_spellings_pass_and_near_misses_fail",
    "B16": "tests/test_bank_check.py::test_right_spellings_pass_and_near_misses_fail",
    "S2": "tests/test_scheduling.py::test_lapses_count_forgotten_reviews_only",
    "S3": "tests/test_scheduling.py::test_vectorized_retrievability_agrees_with_py_fsrs",
    "S4": "tests/test_scheduling.py::test_vectorized_retrievability_agrees_with_py_fsrs",
    "S5": "tests/test_scheduling.py::test_graded_answers_are_rated_by_the_policy[answer4-1000-5000.0-2]",
    "S6": "tests/test_scheduling.py::test_graded_answers_are_rated_by_the_policy[answer6-5000-5000.0-3]",
    "S7": "tests/test_scheduling.py::test_learner_day_starts_at_the_local_rollover_hour",
    "S8": "tests/test_scheduling.py::test_which_cards_count_as_due_now",
    "S9": "tests/test_scheduling.py::test_limits_cap_reviews_and_new_items_share_the_review_budget",
    "S10": "tests/test_scheduling.py::test_due_reviews_come_first_least_remembered_first",
    "S11": "tests/test_scheduling.py::test_spreading_leaves_an_already_spread_queue_alone",
    "S12": "tests/test_scheduling.py::test_new_items_follow_lesson_prerequisites_and_skill_order",
    "S14": "tests/test_fsrs.py::test_parameters_that_predict_better_are_adopted_and_reschedule[sqlite]",
    "PR1": "tests/test_problems.py::test_the_same_kind_seed_and_level_give_the_same_problem",
    "PR2": "tests/test_problems.py::test_every_buggy_pipeline_is_the_engine_run_the_buggy_way",
    "PR3": "tests/test_problems.py::test_every_buggy_pipeline_is_the_engine_run_the_buggy_way",
    "PR6": "tests/test_problems.py::test_integers_redraw_rejected_words_in_order",
    "PR9": "tests/test_problems.py::test_temperature_the_colder_distribution_is_sharper",
    "PR10": "tests/test_problems.py::test_recorded_problems_come_out_the_same[scores-1-1-]",
    "PR12": "tests/test_problems.py::test_every_applicable_mistake_is_clearly_apart",
    "PR13": "tests/test_problems.py::test_recorded_problems_come_out_the_same[scores-1-1-]",
    "D1": "tests/test_api_drill.py::test_retry_with_the_same_key_stores_nothing_new[sqlite]",
    "D3": "tests/test_api_drill.py::test_wrong_answer_flow_over_the_api[sqlite]",
    "D7": "tests/test_api_drill.py::test_wrong_answer_flow_over_the_api[sqlite]",
    "R4": "tests/test_services_reviews.py::test_the_card_follows_the_fsrs_transition_answer_after_answer[sqlite]",
    "R9": "tests/test_services_reviews.py::test_the_open_item_closes_when_it_is_answered[sqlite]",
    "Q1": "tests/test_services_queue.py::test_daily_new_limit_counts_the_learners_own_day[sqlite]",
    "Q3": "tests/test_services_queue.py::test_the_next_lesson_opens_in_skill_order[sqlite]",
    "Q4": "tests/test_services_queue.py::test_review_limit_caps_the_whole_day[sqlite]",
    "E6": "tests/test_pinned_core.py::test_value_batch_axes_reach_every_intermediate",
    "G6": "tests/test_pinned_core.py::test_ties_between_misconceptions_go_to_catalogue_order",
    "G10": "tests/test_pinned_core.py::test_a_transposed_later_step_that_follows_the_learners_own_keeps_its_credit",
    "G11": "tests/test_pinned_core.py::test_weights_carried_forward_keep_a_row_that_sees_no_key",
    "G13": "tests/test_pinned_core.py::test_a_whitespace_only_answer_counts_as_unanswered",
    "S1": "tests/test_pinned_core.py::test_three_days_with_a_middle_draw_become_four",
    "S13": "tests/test_pinned_core.py::test_the_sm2_baseline_ease_stops_at_its_floor",
    "PR4": "tests/test_pinned_core.py::test_a_row_peak_is_tied_when_its_largest_entry_occurs_twice",
    "PR5": "tests/test_pinned_core.py::test_a_drawn_mask_never_hides_a_whole_row",
    "PR7": "tests/test_pinned_core.py::test_the_tolerance_is_pinned_and_an_answer_a_thousandth_off_is_wrong",
    "PR11": "tests/test_pinned_core.py::test_causal_flipped_is_the_transposed_visibility",
    "PR14": "tests/test_pinned_core.py::test_a_drawn_score_mask_hides_at_least_one_cell",
    "S17": "tests/test_pinned_core.py::test_an_easy_review_raises_the_sm2_ease_by_fifteen_points",
    "E11": "tests/test_problems.py::test_answers_are_the_engines_results",
    "W1": "tests/test_lab.py::test_lab_causal_flag_hides_the_future",
    "D2": "tests/test_pinned_services.py::test_an_answer_today_extends_yesterdays_streak",
    "D19": "tests/test_pinned_services.py::test_an_answer_today_extends_yesterdays_streak",
    "D5": "tests/test_pinned_services.py::test_the_open_item_counts_itself_when_the_queue_no_longer_holds_it",
    "D6": "tests/test_pinned_services.py::test_explaining_a_right_answer_is_a_conflict",
    "D8": "tests/test_pinned_services.py::test_an_idempotency_key_reused_for_another_item_is_refused",
    "D11": "tests/test_pinned_services.py::test_only_a_recall_item_shows_its_model_answer_before_grading",
    "D13": "tests/test_pinned_services.py::test_a_retry_after_the_explanation_shows_the_explanation",
    "D17": "tests/test_pinned_services.py::test_a_wrong_choice_stores_the_misconception_its_option_names",
    "D20": "tests/test_pinned_services.py::test_the_drill_position_counts_only_todays_answers",
    "R2": "tests/test_pinned_services.py::test_a_recall_item_is_correct_unless_rated_again",
    "R3": "tests/test_pinned_services.py::test_the_learners_pace_ignores_their_wrong_answers",
    "R5": "tests/test_pinned_services.py::test_seed_zero_is_a_valid_problem_seed",
    "R6": "tests/test_pinned_services.py::test_a_rewritten_explanation_replaces_the_stored_text",
    "R8": "tests/test_pinned_services.py::test_an_idempotency_key_with_a_control_character_is_refused",
    "R12": "tests/test_pinned_services.py::test_an_overlong_explanation_is_refused",
    "R16": "tests/test_pinned_services.py::test_a_retired_item_cannot_be_opened",
    "Q2": "tests/test_pinned_services.py::test_a_retired_items_due_card_leaves_the_queue",
    "Q5": "tests/test_pinned_services.py::test_a_review_that_comes_due_later_today_is_offered_now",
    "Q10": "tests/test_pinned_services.py::test_another_learners_cards_stay_out_of_the_queue",
    "Q11": "tests/test_pinned_services.py::test_another_learners_cards_stay_out_of_the_queue",
}


@dataclass
class Outcome:
    """What happened to one mutant."""

    mutant: Mutant
    status: str  # killed, survived, stale, equivalent, skipped
    detail: str = ""
    seconds: float = 0.0


def apply(source: str, mutant: Mutant) -> str | None:
    """Return `source` with the mutant applied, or None if its snippet is stale.

    The snippet must occur exactly once: a missing or repeated snippet would
    mutate nothing or the wrong place.
    """
    if source.count(mutant.before) != 1:
        return None
    return source.replace(mutant.before, mutant.after, 1)


def test_files(module: str, tree: Path) -> list[str]:
    """The test files for a module's mutants that exist in `tree`."""
    names = [f"tests/{name}.py" for name in TESTS[module]]
    return [name for name in names if (tree / name).exists()]


def copy_tree(destination: Path) -> None:
    """Copy the working tree's source, tests and data (not .git or .venv)."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file():
            target = destination / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)


def run_tests(tree: Path, files: list[str], timeout: float) -> tuple[int, str]:
    """Run pytest on `files` in `tree`; return its exit code and first failure."""
    shutil.rmtree(tree / ".hypothesis", ignore_errors=True)  # no replayed examples
    env = dict(
        os.environ,
        PYTHONPATH=str(tree),
        PYTHONDONTWRITEBYTECODE="1",  # a stale .pyc must never hide a mutant
    )
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-x",
        "-q",
        "-p",
        "no:cacheprovider",
        "--hypothesis-seed=0",
        "-m",
        "not browser",
        *files,
    ]
    try:
        done = subprocess.run(
            command, cwd=tree, env=env, capture_output=True, text=True, timeout=timeout
        )
    except subprocess.TimeoutExpired:
        return -1, f"timed out after {timeout:.0f} s"
    failed = re.search(r"^(?:FAILED|ERROR) (.+?)(?: - |$)", done.stdout, re.MULTILINE)
    if failed:
        return done.returncode, failed.group(1)
    last = (
        done.stdout.strip().splitlines()[-1:] or done.stderr.strip().splitlines()[-1:]
    )
    return done.returncode, last[0] if last else ""


def run_mutant(
    mutant: Mutant, tree: Path, timeout: float, tests: list[str] | None = None
) -> Outcome:
    """Apply one mutant in `tree`, run its tests, and put the file back."""
    if mutant.equivalent:
        return Outcome(mutant, "equivalent", mutant.equivalent)
    if mutant.needs_postgres and not os.environ.get("QUIZSVC_TEST_POSTGRES_URL"):
        return Outcome(mutant, "skipped", "needs QUIZSVC_TEST_POSTGRES_URL")
    path = tree / mutant.file
    original = path.read_text(encoding="utf-8")
    mutated = apply(original, mutant)
    if mutated is None:
        found = original.count(mutant.before)
        return Outcome(mutant, "stale", f"snippet found {found} times, not once")
    start = time.monotonic()
    path.write_text(mutated, encoding="utf-8")
    try:
        code = None
        killer = KILLERS.get(mutant.id)
        if killer and not tests and (tree / killer.split("::")[0]).exists():
            code, detail = run_tests(tree, [killer], timeout)
            if code not in (1, 2):  # passed, or the test is gone: run them all
                code = None
        if code is None:
            files = tests or test_files(mutant.module, tree)
            code, detail = run_tests(tree, files, timeout)
    finally:
        path.write_text(original, encoding="utf-8")
    seconds = time.monotonic() - start
    if code == 0:
        return Outcome(mutant, "survived", "", seconds)
    if code == 5:
        return Outcome(mutant, "stale", "no tests collected", seconds)
    return Outcome(mutant, "killed", detail, seconds)


def line_for(outcome: Outcome) -> str:
    """One printed line per mutant."""
    m = outcome.mutant
    took = f"{outcome.seconds:6.1f}s" if outcome.seconds else " " * 7
    return f"{m.id:<6} {m.module:<11} {outcome.status:<10} {took}  {outcome.detail}"


def score_line(outcomes: list[Outcome], label: str = "score") -> str:
    """`label: K/N killed (P%)` over the mutants that ran."""
    ran = [o for o in outcomes if o.status in ("killed", "survived")]
    killed = sum(o.status == "killed" for o in ran)
    percent = 100.0 * killed / len(ran) if ran else 0.0
    return f"{label}: {killed}/{len(ran)} killed ({percent:.1f}%)"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="Apply a fixed list of mutants to a copy of the tree and "
        "report which ones the tests catch."
    )
    parser.add_argument("ids", nargs="*", help="run only these mutants (e.g. E1 D8)")
    parser.add_argument(
        "--module",
        choices=sorted(TESTS),
        action="append",
        help="run only this module's mutants (may be repeated)",
    )
    parser.add_argument("--list", action="store_true", help="list mutants and exit")
    parser.add_argument(
        "--jobs", type=int, default=1, help="mutants run at once (default 1)"
    )
    parser.add_argument(
        "--tests",
        action="append",
        metavar="FILE",
        help="run these test files instead of the module's (may be repeated)",
    )
    parser.add_argument(
        "--no-baseline",
        action="store_true",
        help="skip checking that the tests pass on the unmutated tree",
    )
    parser.add_argument(
        "--timeout", type=float, default=900, help="seconds per mutant (default 900)"
    )
    return parser.parse_args(argv)


def select(args: argparse.Namespace) -> list[Mutant]:
    """The mutants the options ask for, in list order."""
    # --list shows the retired ones (with why); a run skips them.
    chosen = MUTANTS if args.list else [m for m in MUTANTS if not m.retired]
    if args.module:
        chosen = [m for m in chosen if m.module in args.module]
    if args.ids:
        known = {m.id for m in MUTANTS}
        unknown = [i for i in args.ids if i not in known]
        if unknown:
            raise SystemExit(f"unknown mutant(s): {', '.join(unknown)}")
        chosen = [m for m in chosen if m.id in args.ids]
    return chosen


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.jobs < 1:
        print("--jobs must be at least 1", file=sys.stderr)
        return 2
    chosen = select(args)
    if args.list:
        for m in chosen:
            source = (ROOT / m.file).read_text(encoding="utf-8")
            state = (
                "retired"
                if m.retired
                else "stale"
                if apply(source, m) is None
                else "equivalent"
                if m.equivalent
                else ""
            )
            snippet = m.retired or m.before.strip().splitlines()[0]
            print(f"{m.id:<6} {m.file:<30} {state:<10} {snippet}")
        return 0

    with tempfile.TemporaryDirectory(prefix="quizsvc-mutation-") as scratch:
        trees = []
        for n in range(args.jobs):
            tree = Path(scratch) / f"tree{n}"
            copy_tree(tree)
            trees.append(tree)
        if not args.no_baseline:
            modules = sorted({m.module for m in chosen if not m.equivalent})
            files = args.tests or sorted(
                {f for mod in modules for f in test_files(mod, trees[0])}
            )
            print(f"checking that the {len(files)} selected test files pass unmutated…")
            code, detail = run_tests(trees[0], files, args.timeout * 4)
            if code != 0:
                print(f"the unmutated tree fails its tests: {detail}", file=sys.stderr)
                return 2

        free = list(trees)
        lock = threading.Lock()

        def work(mutant: Mutant) -> Outcome:
            with lock:
                tree = free.pop()
            try:
                outcome = run_mutant(mutant, tree, args.timeout, args.tests)
            finally:
                with lock:
                    free.append(tree)
            print(line_for(outcome), flush=True)
            return outcome

        with ThreadPoolExecutor(max_workers=args.jobs) as pool:
            outcomes = list(pool.map(work, chosen))

    by_module = defaultdict(list)
    for outcome in outcomes:
        by_module[outcome.mutant.module].append(outcome)
    print()
    for module, group in by_module.items():
        others = [o for o in group if o.status not in ("killed", "survived")]
        extra = ", ".join(f"{o.mutant.id} {o.status}" for o in others)
        print(score_line(group, f"{module:<11}") + (f"  [{extra}]" if extra else ""))
    survivors = [o.mutant.id for o in outcomes if o.status == "survived"]
    if survivors:
        print("survived: " + " ".join(survivors))
    print(score_line(outcomes))
    return 0


if __name__ == "__main__":
    sys.exit(main())
