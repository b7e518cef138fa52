"""Who may open which teacher page and class API route: the access matrix.

Every route is one row of ROUTES with the status each caller gets. Rows for
more class routes (the exports, say) are added to ROUTES and need nothing
else. A class the caller cannot see answers 404, never 403, so ids of other
people's classes reveal nothing; anonymous pages send the browser to sign in.
"""

from __future__ import annotations

import shutil

import pytest
from sqlalchemy import delete, insert, select

from quizsvc import create_app
from quizsvc.db import get_session
from quizsvc.models import Classroom, Membership
from quizsvc.services.accounts import hash_password, issue_token, revoke_token
from quizsvc.services.classes import add_co_teacher, create_class, join_class
from quizsvc.services.users import create_user
from tests.factories import PASSWORD

CALLERS = (
    "anonymous",
    "learner",
    "class_learner",
    "other_teacher",
    "co_teacher",
    "own_teacher",
    "admin",
    "revoked_token",
)
USERNAMES = {
    "learner": "eve",
    "class_learner": "ana",
    "other_teacher": "other",
    "co_teacher": "co",
    "own_teacher": "wang",
    "admin": "root",
}
LOGIN = "login"  # an anonymous page request is redirected to the sign-in page


def _row(anonymous, learner, class_learner, other, co, own, admin, revoked):
    return dict(
        zip(
            CALLERS,
            (anonymous, learner, class_learner, other, co, own, admin, revoked),
            strict=True,
        )
    )


TEACHER_PAGE = _row(LOGIN, 404, 404, 404, 200, 200, 200, LOGIN)
TEACHER_ACTION = _row(LOGIN, 404, 404, 404, 302, 302, 302, LOGIN)
TEACHER_API = _row(401, 404, 404, 404, 200, 200, 200, 401)

# (method, path, expected per caller); {class} is the class's id, {ana} the
# class learner's and {co} the co-teacher's user id.
ROUTES = [
    ("get", "/teacher/", _row(LOGIN, 403, 403, 200, 200, 200, 200, LOGIN)),
    ("post", "/teacher/", _row(LOGIN, 403, 403, 400, 400, 400, 400, LOGIN)),
    ("get", "/teacher/classes/{class}", TEACHER_PAGE),
    ("get", "/teacher/classes/{class}/misconceptions", TEACHER_PAGE),
    ("get", "/teacher/classes/{class}/items", TEACHER_PAGE),
    ("get", "/teacher/classes/{class}/explanations", TEACHER_PAGE),
    ("get", "/teacher/classes/{class}/calibration", TEACHER_PAGE),
    ("get", "/teacher/classes/{class}/learners/{ana}", TEACHER_PAGE),
    ("get", "/teacher/classes/{class}/settings", TEACHER_PAGE),
    ("post", "/teacher/classes/{class}/join-code", TEACHER_ACTION),
    ("post", "/teacher/classes/{class}/joining", TEACHER_ACTION),
    ("post", "/teacher/classes/{class}/learners/{ana}/remove", TEACHER_ACTION),
    (
        "post",
        "/teacher/classes/{class}/learners/{ana}/reset-code",
        _row(LOGIN, 404, 404, 404, 200, 200, 200, LOGIN),
    ),
    (
        "post",
        "/teacher/classes/{class}/teachers",
        _row(LOGIN, 404, 404, 404, 400, 400, 400, LOGIN),
    ),
    (
        "post",
        "/teacher/classes/{class}/teachers/{co}/remove",
        TEACHER_ACTION,
    ),
    (
        "post",
        "/teacher/classes/{class}/roster",
        _row(LOGIN, 404, 404, 404, 400, 400, 400, LOGIN),
    ),
    ("get", "/api/v1/classes", _row(401, 200, 200, 200, 200, 200, 200, 401)),
    ("post", "/api/v1/classes", _row(401, 403, 403, 201, 201, 201, 201, 401)),
    ("post", "/api/v1/classes/{class}/join-code", TEACHER_API),
    ("get", "/api/v1/classes/{class}/learners", TEACHER_API),
    ("get", "/api/v1/classes/{class}/roster", TEACHER_API),
    # An empty body is an empty roster: a 400 for those who may send one.
    (
        "put",
        "/api/v1/classes/{class}/roster",
        _row(401, 404, 404, 404, 400, 400, 400, 401),
    ),
    ("get", "/teacher/classes/{class}/roster", TEACHER_PAGE),
    ("post", "/teacher/classes/{class}/explanations/read", TEACHER_ACTION),
    (
        "post",
        "/api/v1/classes/{class}/learners/{ana}/reset-code",
        _row(401, 404, 404, 404, 201, 201, 201, 401),
    ),
    ("post", "/api/v1/classes/join", _row(401, 201, 409, 201, 409, 409, 201, 401)),
    (
        "patch",
        "/api/v1/classes/{class}/membership",
        _row(401, 404, 200, 404, 404, 404, 404, 401),
    ),
    (
        "delete",
        "/api/v1/classes/{class}/membership",
        _row(401, 404, 200, 404, 404, 404, 404, 401),
    ),
    *(
        ("get", f"/api/v1/classes/{{class}}/exports/{kind}?format={fmt}", TEACHER_API)
        for kind, fmt in (
            ("reviews", "csv"),
            ("reviews", "xlsx"),
            ("reviews", "jsonl"),
            ("summary", "csv"),
            ("summary", "xlsx"),
            ("canvas", "csv"),
            ("xapi", "jsonl"),
            ("workbook", "xlsx"),
        )
    ),
    *(
        ("get", f"/api/v1/me/export?format={fmt}", _row(401, *[200] * 6, 401))
        for fmt in ("csv", "json")
    ),
]


@pytest.fixture(scope="module")
def world(tmp_path_factory, _sqlite_template):
    """One class (wang teaches, co co-teaches, ana learns), others around it."""
    folder = tmp_path_factory.mktemp("access")
    shutil.copyfile(_sqlite_template, folder / "quizsvc.sqlite3")
    app = create_app(
        {
            "TESTING": True,
            "SECRET_KEY": "test-secret",
            "WTF_CSRF_ENABLED": False,
            "DATABASE_URL": f"sqlite:///{folder / 'quizsvc.sqlite3'}",
        }
    )
    roles = {"eve": "learner", "ana": "learner", "other": "teacher", "co": "teacher"}
    roles |= {"wang": "teacher", "root": "admin"}
    digest = hash_password(PASSWORD)
    with app.app_context():
        session = get_session()
        users = {
            name: create_user(session, name, role=role, password_hash=digest)
            for name, role in roles.items()
        }
        create_class(session, users["other"], "别的班")
        classroom = create_class(session, users["wang"], "高二（3）班")
        add_co_teacher(session, classroom, "co")
        join_class(session, users["ana"], classroom.join_code, student_number="01")
        issued = issue_token(session, users["wang"], "old script")
        revoke_token(session, users["wang"], issued.token.id)
        session.commit()
        snapshot = [
            {c: getattr(m, c) for c in ("class_id", "user_id", "role", "joined_at")}
            for m in session.scalars(select(Membership))
        ]
        ids = {name: user.id for name, user in users.items()}
    return {
        "app": app,
        "class_id": classroom.id,
        "ids": ids,
        "revoked": issued.secret,
        "snapshot": snapshot,
    }


def restore(world) -> None:
    """Undo what a request changed: memberships, join code, joining open."""
    with world["app"].app_context():
        session = get_session()
        session.execute(delete(Membership))
        session.execute(insert(Membership), world["snapshot"])
        classroom = session.get(Classroom, world["class_id"])
        classroom.joining_open = True
        session.commit()


def client_for(world, caller: str):
    """A test client signed in as the caller (one per caller: signing in is slow)."""
    clients = world.setdefault("clients", {})
    if caller in clients:
        return clients[caller]
    client = clients[caller] = world["app"].test_client()
    if caller in USERNAMES:
        response = client.post(
            "/api/v1/auth/login",
            json={"username": USERNAMES[caller], "password": PASSWORD},
        )
        assert response.status_code == 200
    return client


def call(world, caller: str, method: str, path: str):
    with world["app"].app_context():
        code = get_session().get(Classroom, world["class_id"]).join_code
    ids = world["ids"]
    places = {"class": world["class_id"], "ana": ids["ana"], "co": ids["co"]}
    url = path.format(**places)
    headers = {}
    if caller == "revoked_token":
        headers["Authorization"] = f"Bearer {world['revoked']}"
    kwargs = {"headers": headers}
    if url.startswith("/api/"):
        body = {"name": "新班"} if method == "post" else None
        if url.endswith("/classes/join"):
            body = {"code": code}
        if method == "patch":
            body = {"share_history": True}
        if body is not None:
            kwargs["json"] = body
    elif url.endswith("/teachers"):
        kwargs["data"] = {"username": "nobody"}
    return getattr(client_for(world, caller), method)(url, **kwargs)


CASES = [
    pytest.param(method, path, caller, expected[caller], id=f"{method} {path} {caller}")
    for method, path, expected in ROUTES
    for caller in CALLERS
]


@pytest.mark.parametrize(("method", "path", "caller", "expected"), CASES)
def test_access_matrix(world, method, path, caller, expected):
    """Does each caller get exactly the status the matrix says?"""
    restore(world)
    response = call(world, caller, method, path)
    if expected == LOGIN:
        assert response.status_code == 302
        assert "/login" in response.location
    else:
        assert response.status_code == expected, response.get_data(as_text=True)[:300]
    if path.startswith("/api/") and response.status_code >= 400:
        assert set(response.json) == {"error", "message"}


def test_the_matrix_covers_every_teacher_and_class_api_route(world):
    """Is every /teacher route and class API route (and method) a row of the matrix?

    A row may name a route's variable parts concretely (e.g. one export kind):
    the route's parameters match any path segment.
    """
    import re

    for rule in world["app"].url_map.iter_rules():
        if not rule.rule.startswith(("/teacher", "/api/v1/classes")):
            continue
        pattern = re.compile(
            "^" + re.sub(r"<[^>]+>", "[^/]+", re.escape(rule.rule)) + "$"
        )
        for method in rule.methods - {"HEAD", "OPTIONS"}:
            assert any(
                row_method == method.lower()
                and pattern.match(re.sub(r"\{\w+\}", "1", path.split("?")[0]))
                for row_method, path, _expected in ROUTES
            ), (method, rule.rule)


def test_a_teacher_never_reads_a_learner_outside_the_class(world):
    """Does the drill-down of a user who is not the class's learner answer 404?"""
    restore(world)
    client = client_for(world, "own_teacher")
    for name in ("eve", "co", "wang"):
        url = f"/teacher/classes/{world['class_id']}/learners/{world['ids'][name]}"
        assert client.get(url).status_code == 404


def test_leaving_ends_the_teachers_access_at_once(world):
    restore(world)
    teacher = client_for(world, "own_teacher")
    page = f"/teacher/classes/{world['class_id']}/learners/{world['ids']['ana']}"
    assert teacher.get(page).status_code == 200
    learner = client_for(world, "class_learner")
    left = learner.delete(f"/api/v1/classes/{world['class_id']}/membership")
    assert left.status_code == 200
    assert teacher.get(page).status_code == 404
    roster = teacher.get(f"/api/v1/classes/{world['class_id']}/learners").json
    assert roster["learners"] == []
