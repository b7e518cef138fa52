"""Shared fixtures: an app on a temporary instance folder, its client and CLI runner."""

from __future__ import annotations

import os

import pytest
from hypothesis import settings
from jinja2 import BytecodeCache

from quizsvc import create_app

# Locally each run explores new examples (and replays any failure it kept in
# .hypothesis/); CI, on a fresh clone, runs the same examples every time, so
# a red run is reproducible and a green one is not luck. `--hypothesis-seed`
# or HYPOTHESIS_PROFILE=default explores in CI too.
settings.register_profile("ci", derandomize=True, print_blob=True)
settings.load_profile(
    os.environ.get("HYPOTHESIS_PROFILE")
    or ("ci" if os.environ.get("CI") else "default")
)

# Test passwords are hashed with one round of PBKDF2 instead of scrypt: scrypt
# costs about 0.1 s by design, and hashing plus signing in made up most of the
# set-up of a test with a learner. Servers started in a subprocess (tests of
# `quizsvc serve`, the browser tests) still hash with scrypt.
QUICK_PASSWORD_HASH = "pbkdf2:sha256:1"


@pytest.fixture(scope="session", autouse=True)
def _quick_password_hashes():
    """Hash passwords cheaply in this process, for every test."""
    from functools import partial

    from werkzeug.security import generate_password_hash

    from quizsvc.services import accounts

    quick = partial(generate_password_hash, method=QUICK_PASSWORD_HASH)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(accounts, "generate_password_hash", quick)
        patch.setattr(accounts, "_DUMMY_HASH", quick("not-a-real-password"))
        yield


class SharedTemplateCache(BytecodeCache):
    """Compiled templates kept for the whole run, checked against their source.

    Each test makes an app of its own, whose Jinja environment would compile
    every template it renders anew: a quarter of a page test's time.
    """

    def __init__(self):
        self.compiled = {}

    def load_bytecode(self, bucket):
        if bucket.key in self.compiled:
            bucket.bytecode_from_string(self.compiled[bucket.key])

    def dump_bytecode(self, bucket):
        self.compiled[bucket.key] = bucket.bytecode_to_string()


TEMPLATE_CACHE = SharedTemplateCache()


def make_test_app(config: dict):
    """create_app(config) with the run's shared template cache."""
    app = create_app(config)
    app.jinja_env.bytecode_cache = TEMPLATE_CACHE
    return app


@pytest.fixture
def app(tmp_path):
    """An app whose SQLite database lives in a fresh temporary folder."""
    app = make_test_app(
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
import secrets  # noqa: E402
import shutil  # noqa: E402
from contextlib import contextmanager  # noqa: E402
from pathlib import Path  # noqa: E402

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

    # DELETE, children first, then restarting the ids is what TRUNCATE ...
    # RESTART IDENTITY does, in a tenth of the time on tables this small.
    engine = make_engine(url, poolclass=NullPool)
    with engine.begin() as connection:
        for table in reversed(Base.metadata.sorted_tables):
            connection.execute(table.delete())
        sequences = connection.scalars(
            text(
                "SELECT sequence_name FROM information_schema.sequences"
                " WHERE sequence_schema = current_schema()"
            )
        ).all()
        for sequence in sequences:
            connection.execute(text(f'ALTER SEQUENCE "{sequence}" RESTART'))
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

    app = make_test_app(
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


# ---------------------------------------------------------------- question bank
# A one-lesson bank in TOML with one question of each type, valid as written;
# tests of the loader break copies of it on purpose.

MINI_LESSON_TOML = """\
id = "lesson-99-mini"
number = 99
title.zh-CN = "迷你课"
title.en = "Mini lesson"
summary.zh-CN = "只用于测试。"
summary.en = "For tests only."
retired = ["mini-old"]

[[prerequisites]]
id = "lesson-98-elsewhere"
title.zh-CN = "别处的课"
title.en = "A lesson elsewhere"

[[skills]]
id = "mini-scores"
title.zh-CN = "分数"
title.en = "Scores"
can_do.zh-CN = "我能算分数。"
can_do.en = "I can compute scores."

[[notes]]
id = "mini-note"
title.zh-CN = "笔记"
title.en = "A note"
body.zh-CN = "正文。"
body.en = "The body."
"""

MINI_QUESTIONS_TOML = """\
[[questions]]
id = "mini-choice"
type = "choice"
skills = ["mini-scores"]
lesson_note = "mini-note"
difficulty = 1
prompt.zh-CN = "选一个。"
prompt.en = "Pick one."
explanation.zh-CN = "选 b。"
explanation.en = "Pick b."

[[questions.options]]
id = "a"
text.zh-CN = "甲"
text.en = "A"
misconception = "no_scale"
why.zh-CN = "不对。"
why.en = "Wrong."

[[questions.options]]
id = "b"
text.zh-CN = "乙"
text.en = "B"
correct = true

[[questions]]
id = "mini-numeric"
type = "numeric"
skills = ["mini-scores"]
lesson_note = "mini-note"
prompt.zh-CN = "算一个数。"
prompt.en = "Compute a number."
explanation.zh-CN = "权重。"
explanation.en = "The weight."
answer = 0.670
tolerance = 0.0015

[questions.attention]
q = [[1, 0]]
k = [[1, 0], [0, 1]]
v = [[1, 0], [0, 2]]
mask = [[0, 0]]
quantity = "weights"
index = [0, 0]

[[questions]]
id = "mini-cloze"
type = "cloze"
skills = ["mini-scores"]
lesson_note = "mini-note"
prompt.zh-CN = "形状是 ____。"
prompt.en = "The shape is ____."
explanation.zh-CN = "行是 query。"
explanation.en = "Rows are queries."
accepted = ["[Tq, Tk]"]

[[questions]]
id = "mini-recall"
type = "recall"
skills = ["mini-scores"]
lesson_note = "mini-note"
prompt.zh-CN = "解释一下。"
prompt.en = "Explain."
explanation.zh-CN = "对照答案。"
explanation.en = "Compare."
model_answer.zh-CN = "这样。"
model_answer.en = "Like this."
key_points = [{ zh-CN = "要点", en = "point" }]

[[questions]]
id = "mini-ordering"
type = "ordering"
skills = ["mini-scores"]
lesson_note = "mini-note"
prompt.zh-CN = "排序。"
prompt.en = "Order them."
explanation.zh-CN = "先后。"
explanation.en = "In order."

[[questions.steps]]
id = "one"
text.zh-CN = "一"
text.en = "one"

[[questions.steps]]
id = "two"
text.zh-CN = "二"
text.en = "two"

[[questions.steps]]
id = "three"
text.zh-CN = "三"
text.en = "three"

[[questions]]
id = "mini-generated"
type = "generated"
skills = ["mini-scores"]
kind = "scores"
level = 1
lesson_note = "mini-note"
prompt.zh-CN = "新数字。"
prompt.en = "New numbers."
explanation.zh-CN = "点积。"
explanation.en = "Dot products."
"""


class MiniBank:
    """Writes the mini bank (or a broken copy) as questions/lesson-99-mini/."""

    lesson = MINI_LESSON_TOML
    questions = MINI_QUESTIONS_TOML

    def __init__(self, root):
        self.root = root

    def write(self, lesson=None, questions=None, extra=None, under="bank"):
        """Write the bank under root/<under>/questions and return that folder."""
        from pathlib import Path

        folder = Path(self.root) / under / "questions" / "lesson-99-mini"
        folder.mkdir(parents=True)
        files = {
            "lesson.toml": self.lesson if lesson is None else lesson,
            "questions.toml": self.questions if questions is None else questions,
            **(extra or {}),
        }
        for name, content in files.items():
            (folder / name).write_text(content, encoding="utf-8")
        return folder.parent


@pytest.fixture
def mini_bank(tmp_path):
    """A writer of small TOML banks in tmp_path: .lesson/.questions texts, .write()."""
    return MiniBank(tmp_path)


# --- learners for tests of the pages and the API -------------------------------


@pytest.fixture
def learner(app):
    """The id of a learner "ana" in the requesting module's `app`."""
    from tests.webutil import make_learner

    return make_learner(app, "ana")


@pytest.fixture
def learner_client(app, learner):
    """A test client signed in as the learner."""
    from tests.webutil import sign_in

    client = app.test_client()
    sign_in(client, "ana")
    return client


# --- a real browser against `quizsvc serve` (tests/test_browser*.py) -----------
# One server and one Chromium per module. A module may set BROWSER_ARGS (more
# Chromium flags) and SCREENSHOT_FOLDER (a sub-folder of QUIZSVC_SCREENSHOT_DIR).


@pytest.fixture(scope="module")
def server_instance(tmp_path_factory):
    """The instance folder of the module's server (its SQLite database is there)."""
    return tmp_path_factory.mktemp("browser-instance")


@pytest.fixture(scope="module")
def server(server_instance):
    """The base URL of `quizsvc serve` running on `server_instance`."""
    from tests.test_serve import start_server, stop_server

    process, url = start_server(server_instance)
    yield url
    stop_server(process)


@pytest.fixture(scope="module")
def browser(request):
    """Debian's Chromium, driven by Playwright."""
    from tests.browserutil import CHROMIUM, CHROMIUM_ARGS

    sync_api = pytest.importorskip("playwright.sync_api")
    extra = getattr(request.module, "BROWSER_ARGS", [])
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, args=[*CHROMIUM_ARGS, *extra]
        )
        yield browser
        browser.close()


@pytest.fixture(scope="module")
def shots(request, tmp_path_factory):
    """The folder the module's screenshots go to."""
    base = os.environ.get("QUIZSVC_SCREENSHOT_DIR")
    sub = getattr(request.module, "SCREENSHOT_FOLDER", "")
    folder = Path(base) / sub if base else tmp_path_factory.mktemp(sub or "shots")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


# --- the pages with the real question bank -------------------------------------


@pytest.fixture
def page_app(db_app):
    """An app on each backend holding the real bank, with form CSRF checks off.

    A module of page tests names it as its `app`, which `learner` and
    `learner_client` use.
    """
    from tests.learnerutil import sync_real_bank

    db_app.config["WTF_CSRF_ENABLED"] = False
    sync_real_bank(db_app)
    return db_app
