"""Practice problems over JSON: get a generated problem, check answers to it.

Nothing is stored. A problem's id is "<kind>:<level>:<seed>", which names the
problem completely, so any client (or another learner) can check answers to
it later. Anonymous clients are welcome.
"""

from __future__ import annotations

from typing import Any

from flask import url_for

from quizsvc import grading, problems
from quizsvc.api import bp, json_body
from quizsvc.errors import N_, BadRequest, Locked, NotFound
from quizsvc.http.drill import problem_closed
from quizsvc.i18n import current_language
from quizsvc.problems import MAX_SEED, fresh_seed, is_seed, load_problem
from quizsvc.text import pick


def id_of(problem: problems.Problem) -> str:
    """The stateless id of a problem: "<kind>:<level>:<seed>"."""
    return f"{problem.kind}:{problem.level}:{problem.seed}"


def problem_from_id(ident: str) -> problems.Problem | None:
    """Generate the problem an id names, or None when it names none."""
    kind, _, rest = ident.partition(":")
    level_text, _, seed_text = rest.partition(":")
    numbers = level_text + seed_text
    if not (level_text and seed_text and numbers.isascii() and numbers.isdigit()):
        return None
    if len(seed_text) > len(str(MAX_SEED)):
        return None  # refuse absurdly long numbers before converting them
    problem = load_problem(kind, int(level_text), int(seed_text))
    # One problem, one id: "attention:02:007" is not another name for it.
    return problem if problem is not None and id_of(problem) == ident else None


def _public(problem: problems.Problem) -> dict[str, Any]:
    ident = id_of(problem)
    return {
        "id": ident,
        **problem.public_dict(current_language()),
        "permalink": url_for(
            "practice.problem",
            kind=problem.kind,
            level=problem.level,
            seed=problem.seed,
            _external=True,
        ),
        "check_url": url_for("api.api_check_problem", problem_id=ident),
    }


@bp.post("/problems")
def api_new_problem():
    """Generate a practice problem (kind, level 1-3, optional seed) in public form."""
    body = json_body(("kind",))
    kind = body["kind"]
    if not isinstance(kind, str) or kind not in problems.KINDS:
        raise BadRequest(
            N_("kind must be one of: %(kinds)s"),
            field="kind",
            kinds=list(problems.KINDS),
        )
    level = body.get("level", 1)
    if (
        isinstance(level, bool)
        or not isinstance(level, int)
        or level not in problems.LEVELS
    ):
        raise BadRequest(
            N_("level must be a whole number, one of %(levels)s."),
            field="level",
            levels=list(problems.LEVELS),
        )
    seed = body.get("seed")
    if seed is None:
        seed = fresh_seed()
    elif not is_seed(seed):
        raise BadRequest(
            N_("seed must be a whole number from 0 to %(most)d."),
            field="seed",
            most=MAX_SEED,
        )
    problem = load_problem(kind, level, seed)
    if problem is None:  # pragma: no cover - every checked kind, level, seed works
        raise BadRequest(N_("There is no problem for this kind, level and seed."))
    return _public(problem), 201


@bp.post("/problems/<problem_id>/check")
def api_check_problem(problem_id: str):
    """Grade answers (each asked name → typed text or nested list) step by step."""
    problem = problem_from_id(problem_id)
    if problem is None:
        raise NotFound(
            N_(
                "There is no problem '%(id)s' (ids look like \"attention:2:12345\": "
                "kind, level, seed)."
            ),
            id=problem_id,
        )
    if problem_closed(problem.kind, problem.seed, problem.level):
        raise Locked(
            N_(
                "This problem is open in a drill: it can be checked once it has "
                "been answered (and, after a wrong answer, explained)."
            )
        )
    answers = json_body(("answers",))["answers"]
    if not isinstance(answers, dict):
        raise BadRequest(
            N_(
                "answers must be an object: each asked name → your answer, "
                'e.g. {"S": "[[0.7071, 0]]"}.'
            ),
            field="answers",
        )
    verdict = grading.grade(problem, answers)
    lang = current_language()
    if verdict.format_errors:
        response = {
            "error": "format_error",
            "message": " ".join(pick(e.message, lang) for e in verdict.format_errors),
            "format_errors": [e.to_dict() for e in verdict.format_errors],
        }
        return response, 400
    return {
        "id": id_of(problem),
        **verdict.to_dict(),
        "misconception_explanation": grading.MISCONCEPTIONS.get(verdict.misconception),
        "expected": {ask.name: problem.answer_json(ask.name) for ask in problem.ask},
    }
