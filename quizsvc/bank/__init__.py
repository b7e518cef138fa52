"""The question bank: lessons, skills, notes and questions read from TOML files.

The bank lives in ``questions/``, one folder per lesson: ``lesson.toml`` holds the
lesson, its skills and its notes; every other ``*.toml`` file in the folder holds
``[[questions]]``. ``questions/README.md`` documents the format for authors.

`load` returns a frozen `Bank` or raises `BankError`; `validate` returns the same
problems as a list of `Problem(path, line, message)`, and `lint` the warnings
(cues that let a learner guess) in the same form. `check_answer` grades a
typed answer to a choice, numeric, cloze or ordering question.

The package has one module per concern: `model` (the loaded objects), `read`
(the folders, lessons, skills and notes, and what spans files), `source` (one
TOML file and its problems, located by `locate`), `items` (one reader per
question type; numeric answers in `numeric`), `ideas` (the lesson's ideas
and the questions that exercise each), `lint` (wording checks: guessable
cues and house style), `answers` (checking typed answers) and `equivalence`
(the policy that says which spellings are one answer).

Pure standard library and NumPy (plus the other pure core modules): the
database sync and the web drill build on this, never the other way round.
"""

from quizsvc.bank.answers import check_answer, format_answer
from quizsvc.bank.equivalence import canonical_answer
from quizsvc.bank.model import (
    DEFAULT_PATH,
    LANGUAGES,
    QUESTION_TYPES,
    SELF_ASSESSMENT_SCALE,
    AnswerCheck,
    Bank,
    BankError,
    Idea,
    Lesson,
    Note,
    Problem,
    Question,
    Skill,
    presented_steps,
)
from quizsvc.bank.read import display_path, lint, load, validate

__all__ = [
    "DEFAULT_PATH",
    "LANGUAGES",
    "QUESTION_TYPES",
    "SELF_ASSESSMENT_SCALE",
    "AnswerCheck",
    "Bank",
    "BankError",
    "Idea",
    "Lesson",
    "Note",
    "Problem",
    "Question",
    "Skill",
    "canonical_answer",
    "check_answer",
    "display_path",
    "format_answer",
    "lint",
    "load",
    "presented_steps",
    "validate",
]
