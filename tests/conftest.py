"""Shared fixtures: an app on a temporary instance folder, its client and CLI runner."""

from __future__ import annotations

import pytest

from quizsvc import create_app


@pytest.fixture
def app(tmp_path):
    """An app whose SQLite database lives in a fresh temporary folder."""
    app = create_app(
        {
            "TESTING": True,
            "SECRET_KEY": "test-secret",
            "DATABASE_URL": f"sqlite:///{tmp_path / 'quizsvc.sqlite3'}",
        }
    )
    yield app


@pytest.fixture
def client(app):
    return app.test_client()


@pytest.fixture
def runner(app):
    return app.test_cli_runner()


# --- databases: SQLite always, PostgreSQL when QUIZSVC_TEST_POSTGRES_URL is set ---
import hashlib  # noqa: E402
import os  # noqa: E402
import secrets  # noqa: E402
import shutil  # noqa: E402
from contextlib import contextmanager  # noqa: E402

from sqlalchemy import text  # noqa: E402
from sqlalchemy.engine import make_url  # noqa: E402
from sqlalchemy.orm import Session  # noqa: E402
from sqlalchemy.pool import NullPool  # noqa: E402

POSTGRES_URL_VARIABLE = "QUIZSVC_TEST_POSTGRES_URL"
BACKENDS = ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)]


def postgres_base_url() -> str:
    """The PostgreSQL server to test against, or skip the test saying why."""
    url = os.environ.get(POSTGRES_URL_VARIABLE)
    if not url:
        pytest.skip(
            f"{POSTGRES_URL_VARIABLE} is not set (e.g. "
            "postgresql+psycopg://postgres@127.0.0.1:5432/test); .ci/run sets it "
            "when a server answers"
        )
    return url


@contextmanager
def postgres_schema():
    """Create a private schema, yield a URL whose connections use it, then drop it.

    Several test runs may share the server's database at once; each works in
    its own schema and drops only that.
    """
    from quizsvc.db import make_engine

    base = postgres_base_url()
    name = f"quizsvc_test_{os.getpid()}_{secrets.token_hex(4)}"
    admin = make_engine(base, poolclass=NullPool)
    with admin.begin() as connection:
        connection.execute(text(f'CREATE SCHEMA "{name}"'))
    url = make_url(base).update_query_dict({"options": f"-csearch_path={name}"})
    try:
        yield url.render_as_string(hide_password=False)
    finally:
        with admin.begin() as connection:
            connection.execute(text(f'DROP SCHEMA "{name}" CASCADE'))
        admin.dispose()


@pytest.fixture(params=BACKENDS)
def empty_database_url(request, tmp_path):
    """The URL of an empty database with no schema yet, on each backend."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'empty.sqlite3'}"
        return
    with postgres_schema() as url:
        yield url


@pytest.fixture(scope="session")
def _sqlite_template(tmp_path_factory):
    from quizsvc.db import make_engine, upgrade

    path = tmp_path_factory.mktemp("template") / "migrated.sqlite3"
    engine = make_engine(f"sqlite:///{path}")
    upgrade(engine)
    engine.dispose()
    return path


@pytest.fixture(scope="session")
def _postgres_migrated():
    from quizsvc.db import make_engine, upgrade

    with postgres_schema() as url:
        engine = make_engine(url, poolclass=NullPool)
        upgrade(engine)
        engine.dispose()
        yield url


@pytest.fixture(params=BACKENDS)
def database_url(request, tmp_path):
    """The URL of a migrated, empty database, on each backend."""
    if request.param == "sqlite":
        path = tmp_path / "quizsvc.sqlite3"
        shutil.copyfile(request.getfixturevalue("_sqlite_template"), path)
        yield f"sqlite:///{path}"
        return
    url = request.getfixturevalue("_postgres_migrated")
    yield url
    # The migrated schema is shared by the session's tests: empty it again.
    from quizsvc.db import make_engine
    from quizsvc.models import Base

    engine = make_engine(url, poolclass=NullPool)
    tables = ", ".join(f'"{t.name}"' for t in Base.metadata.sorted_tables)
    with engine.begin() as connection:
        connection.execute(text(f"TRUNCATE {tables} RESTART IDENTITY CASCADE"))
    engine.dispose()


@pytest.fixture
def db_engine(database_url):
    """An engine on a migrated, empty database (each backend)."""
    from quizsvc.db import make_engine

    engine = make_engine(database_url)
    yield engine
    engine.dispose()


@pytest.fixture
def db_session(db_engine):
    """A session on a migrated, empty database; the test commits what it needs."""
    with Session(db_engine, expire_on_commit=False) as session:
        yield session


@pytest.fixture
def db_app(database_url, tmp_path):
    """An app on a migrated, empty database (each backend)."""
    from quizsvc.db import get_engine

    app = create_app(
        {
            "TESTING": True,
            "SECRET_KEY": "test-secret",
            "DATABASE_URL": database_url,
        }
    )
    yield app
    get_engine(app).dispose()


def build_bank(lessons, skills, questions):
    """Build a quizsvc.bank.Bank from plain dicts (for tests of code that reads one).

    lessons: {id: {"number", "prerequisites"}}; skills: {id: {"lesson", "order"}};
    questions: {id: (lesson id, type, skill ids)} or (..., data dict).
    """
    from quizsvc.bank import Bank, Lesson, Question, Skill

    def text_of(label):
        return {"zh-CN": f"{label}(中文)", "en": label}

    lesson_objects = {
        lesson_id: Lesson(
            id=lesson_id,
            number=spec["number"],
            title=text_of(f"lesson {spec['number']}"),
            summary=text_of("summary"),
            prerequisites=tuple(spec.get("prerequisites", ())),
            skill_ids=tuple(s for s, v in skills.items() if v["lesson"] == lesson_id),
        )
        for lesson_id, spec in lessons.items()
    }
    skill_objects = {
        skill_id: Skill(
            id=skill_id,
            lesson_id=spec["lesson"],
            order=spec["order"],
            title=text_of(skill_id),
            can_do=text_of(f"can do {skill_id}"),
        )
        for skill_id, spec in skills.items()
    }
    question_objects = {}
    for question_id, spec in questions.items():
        lesson_id, kind, skill_ids, data = (*spec, {})[:4]
        fields = (question_id, lesson_id, kind, skill_ids, data)
        question_objects[question_id] = Question(
            id=question_id,
            lesson_id=lesson_id,
            type=kind,
            skills=tuple(skill_ids),
            prompt=text_of(f"prompt of {question_id}"),
            explanation=text_of("because"),
            lesson_note="",
            difficulty=None,
            data=data,
            content_hash=hashlib.sha256(repr(fields).encode()).hexdigest(),
        )
    return Bank(lesson_objects, skill_objects, {}, question_objects)


@pytest.fixture
def make_bank():
    """The `build_bank` factory, for tests that need a bank of their own."""
    return build_bank


@pytest.fixture
def small_bank():
    """Two lessons (16 needs 15), ordered skills, items of several types."""
    return build_bank(
        lessons={
            "lesson-15": {"number": 15},
            "lesson-16": {"number": 16, "prerequisites": ["lesson-15"]},
        },
        skills={
            "shapes": {"lesson": "lesson-15", "order": 1},
            "scores": {"lesson": "lesson-16", "order": 1},
            "weights": {"lesson": "lesson-16", "order": 2},
            "output": {"lesson": "lesson-16", "order": 3},
        },
        questions={
            "shapes-1": ("lesson-15", "choice", ["shapes"]),
            "shapes-2": ("lesson-15", "recall", ["shapes"]),
            "output-1": ("lesson-16", "numeric", ["output"]),
            "weights-1": ("lesson-16", "numeric", ["weights"]),
            "scores-1": ("lesson-16", "numeric", ["scores"]),
            "scores-2": ("lesson-16", "recall", ["scores"]),
            "weights-2": ("lesson-16", "choice", ["weights", "scores"]),
        },
    )
