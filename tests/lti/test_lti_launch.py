"""LTI 1.3 launches through the served app, from simulated Canvas and Moodle.

Each launch goes the whole way over HTTP: the platform's login initiation,
quizsvc's redirect to the platform's OIDC endpoint, the platform's signed
id_token posted back, the validation, and the page the user lands on. Every
refusal the issue lists is here, with its page, its log line and no account.
"""

from __future__ import annotations

import re
import time
import uuid

import jwt
import pytest
from sqlalchemy import select

from quizsvc.models import Classroom, Membership, User
from quizsvc.models.lti import LtiAccount, LtiContext, LtiUsedNonce
from tests.fixtures import lti as ltiutil
from tests.fixtures.lti import Browser
from tests.fixtures.lti_platform import rsa_key

pytestmark = pytest.mark.slow
# A quizsvc served with simulated Canvas and Moodle, per module and backend.
served = ltiutil.served


def _course(platform, title="Attention by hand"):
    course = platform.add_course(f"course-{uuid.uuid4().hex[:8]}", title)
    teacher = platform.add_person(
        course, f"t{uuid.uuid4().hex[:6]}", "Wang Fang", "teacher"
    )
    learner = platform.add_person(
        course,
        f"l{uuid.uuid4().hex[:6]}",
        "Li Lei",
        "learner",
        student_number="2026001",
    )
    return course, teacher, learner


def _rows(served, query):
    engine = served.engine()
    try:
        with engine.connect() as connection:
            return connection.execute(query).all()
    finally:
        engine.dispose()


def _session_cookie_header(response) -> str:
    cookies = response.raw.headers.getlist("Set-Cookie")
    return next(c for c in cookies if c.startswith("session="))


# --- launches -----------------------------------------------------------------------


def test_instructor_then_learner_launch_from_canvas(served):
    """Does the first instructor launch make the class, and a learner launch
    sign in a passwordless account bound to issuer + sub, in that class?"""
    canvas = served.canvas
    course, teacher, learner = _course(canvas)

    instructor = Browser(served)
    answer = instructor.launch(canvas, teacher, course)
    assert answer.status_code == 302
    class_id = int(
        re.search(r"/teacher/classes/(\d+)$", answer.headers["Location"]).group(1)
    )
    dashboard = instructor.get(answer.headers["Location"])
    assert dashboard.status_code == 200 and "Attention by hand" in dashboard.text
    assert 'id="lti-panel"' in dashboard.text

    student = Browser(served)
    answer = student.launch(canvas, learner, course)
    assert answer.status_code == 302 and answer.headers["Location"].endswith("/drill")
    drill = student.get("/drill")
    assert drill.status_code == 200 and 'id="answer-form"' in drill.text

    rows = _rows(
        served,
        select(
            LtiAccount.sub,
            LtiAccount.email,
            User.display_name,
            User.password_hash,
            User.role,
            Membership.role,
            Membership.student_number,
        )
        .join(User, User.id == LtiAccount.user_id)
        .join(Membership, Membership.user_id == User.id)
        .where(LtiAccount.issuer == canvas.issuer, Membership.class_id == class_id)
        .order_by(Membership.role),
    )
    assert rows == [
        (learner.sub, learner.email, "Li Lei", None, "learner", "learner", "2026001"),
        (teacher.sub, teacher.email, "Wang Fang", None, "teacher", "teacher", None),
    ]
    context = _rows(
        served,
        select(LtiContext.context_id, LtiContext.class_id, LtiContext.title).where(
            LtiContext.class_id == class_id
        ),
    )
    assert context == [(course.id, class_id, "Attention by hand")]


def test_a_second_launch_finds_the_same_account_and_updates_its_name(served):
    canvas = served.canvas
    course, teacher, learner = _course(canvas)
    Browser(served).launch(canvas, teacher, course)
    Browser(served).launch(canvas, learner, course)
    before = served.count(User)
    learner.name = "Li Lei (renamed)"
    again = Browser(served).launch(canvas, learner, course)
    assert again.status_code == 302
    assert served.count(User) == before
    names = _rows(
        served,
        select(User.display_name)
        .join(LtiAccount, LtiAccount.user_id == User.id)
        .where(LtiAccount.sub == learner.sub),
    )
    assert names == [("Li Lei (renamed)",)]


def test_moodle_launch_speaks_chinese_and_keeps_the_student_number(served):
    """Moodle sends locale zh_cn, numeric subs and ?type_id= service URLs."""
    moodle = served.moodle
    course, teacher, learner = _course(moodle, "注意力手算")
    assert Browser(served).launch(moodle, teacher, course).status_code == 302
    student = Browser(served)
    answer = student.launch(moodle, learner, course)
    assert answer.headers["Location"].endswith("/drill")
    page = student.get("/drill")
    assert '<html lang="zh-CN">' in page.text
    context = _rows(
        served,
        select(LtiContext.memberships_url, LtiContext.lineitems_url).where(
            LtiContext.context_id == course.id
        ),
    )
    assert context[0][0].endswith("?type_id=1") and context[0][1].endswith("?type_id=1")


def test_a_teaching_assistant_teaches_and_a_learner_first_waits_for_the_class(served):
    canvas = served.canvas
    course = canvas.add_course(f"course-{uuid.uuid4().hex[:8]}", "Early bird")
    early = canvas.add_person(course, f"e{uuid.uuid4().hex[:6]}", "Zhao Min", "learner")
    student = Browser(served)
    answer = student.launch(canvas, early, course)
    assert answer.headers["Location"].endswith("/drill")
    assert "has not opened quizsvc" in student.get("/drill?lang=en").text
    assert (
        _rows(served, select(LtiContext.id).where(LtiContext.context_id == course.id))
        == []
    )
    ta = canvas.add_person(course, f"a{uuid.uuid4().hex[:6]}", "Sun Li", "ta")
    answer = Browser(served).launch(canvas, ta, course)
    assert "/teacher/classes/" in answer.headers["Location"]


def test_lti_pages_cross_sites_and_are_framed_by_the_platform_only(served):
    """Is the LTI session's cookie SameSite=None; Secure, and may only the
    platform's origins frame the pages it opens, while others keep 'none'?"""
    canvas = served.canvas
    course, teacher, _learner = _course(canvas)
    browser = Browser(served)
    login = browser.start_login(canvas, teacher, course)
    cookie = _session_cookie_header(login)
    assert "SameSite=None" in cookie and "Secure" in cookie and "Partitioned" in cookie
    state = [
        c
        for c in login.raw.headers.getlist("Set-Cookie")
        if c.startswith("lti1p3-state")
    ]
    assert state and "SameSite=None" in state[0] and "Secure" in state[0]
    form = browser.authorize(login.headers["Location"])
    answer = browser.post(form.pop("action"), data=form, allow_redirects=False)
    dashboard = browser.get(answer.headers["Location"])
    policy = dashboard.headers["Content-Security-Policy"]
    ancestors = re.search(r"frame-ancestors ([^;]+)", policy).group(1).split()
    assert set(ancestors) == {
        "https://canvas.instructure.com",
        canvas.url,
        canvas.page_origin,
    }
    assert "script-src 'self'" in policy and "X-Frame-Options" not in dashboard.headers

    stranger = Browser(served).get("/lab")
    assert "frame-ancestors 'none'" in stranger.headers["Content-Security-Policy"]
    assert stranger.headers["X-Frame-Options"] == "DENY"
    cookie = stranger.headers.get("Set-Cookie", "")
    assert "SameSite=None" not in cookie


def test_jwks_publishes_the_tool_key(served):
    keys = Browser(served).get("/lti/jwks").json()["keys"]
    assert keys and all(
        k["kty"] == "RSA" and k["alg"] == "RS256" and "d" not in k for k in keys
    )


# --- refusals -----------------------------------------------------------------------


def _refused(served, answer, reason: str, before: tuple[int, int]):
    assert answer.status_code in (400, 403), answer.status_code
    assert f'data-reason="{reason}"' in answer.text
    # In the page's language: Chinese, or the English the launch's locale chose.
    assert (
        "没有保存任何内容，也没有创建账户" in answer.text
        or "Nothing was stored and no account was created" in answer.text
    )
    assert (served.count(User), served.count(LtiAccount)) == before
    deadline = time.monotonic() + 5
    while f"reason={reason}" not in served.log() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert f"lti launch refused: reason={reason}" in served.log()


def _counts(served) -> tuple[int, int]:
    return served.count(User), served.count(LtiAccount)


def _post_token(browser, served, platform, body, *, key=None, kid=None, state=None):
    token = platform.sign(body, key=key, kid=kid)
    return browser.post(
        "/lti/launch", data={"id_token": token, "state": state}, allow_redirects=False
    )


def _fresh_login(served, platform, person, course):
    """A browser that went through login: (browser, the state, the nonce)."""
    browser = Browser(served)
    login = browser.start_login(platform, person, course)
    location = login.headers["Location"]
    nonce = re.search(r"nonce=([^&]+)", location).group(1)
    state = re.search(r"state=([^&]+)", location).group(1)
    return browser, state, nonce


def test_a_login_from_an_unregistered_issuer_is_refused(served):
    canvas = served.canvas
    course, _teacher, learner = _course(canvas)
    before = _counts(served)
    answer = Browser(served).start_login(
        canvas, learner, course, issuer="https://lms.unknown.example"
    )
    _refused(served, answer, "unknown_platform", before)


def _set(**claims):
    return lambda body: body.update(claims)


def _drop(name):
    return lambda body: body.pop(name)


DEPLOYMENT = "https://purl.imsglobal.org/spec/lti/claim/deployment_id"
# (platform, what is wrong with the id_token, sign with another key?, reason)
SPOILED = [
    ("canvas", _set(iss="https://lms.unknown.example"), False, "unknown_platform"),
    ("canvas", _set(aud="another-tool", azp="another-tool"), False, "wrong_audience"),
    (
        "canvas",
        lambda b: b.update(aud=[b["aud"], "x"], azp="x"),
        False,
        "wrong_audience",
    ),
    ("moodle", _set(**{DEPLOYMENT: "999"}), False, "unknown_deployment"),
    (
        "canvas",
        _set(iat=int(time.time()) - 7200, exp=int(time.time()) - 3600),
        False,
        "expired",
    ),
    ("moodle", _drop("exp"), False, "bad_signature"),
    ("canvas", _set(iat=int(time.time()) + 3600), False, "bad_signature"),
    ("canvas", lambda body: None, True, "bad_signature"),
]


@pytest.mark.parametrize(
    ("flavor", "spoil", "other_key", "reason"),
    SPOILED,
    ids=[
        "unregistered-issuer",
        "wrong-audience",
        "azp-not-client",
        "unknown-deployment",
        "expired",
        "no-exp",
        "iat-in-future",
        "foreign-key",
    ],
)
def test_a_spoiled_id_token_is_refused(served, flavor, spoil, other_key, reason):
    """Does a launch whose id_token fails one check get its page, no account?"""
    platform = getattr(served, flavor)
    course, _teacher, learner = _course(platform)
    browser, state, nonce = _fresh_login(served, platform, learner, course)
    body = platform.claims(learner, course, nonce=nonce)
    spoil(body)
    before = _counts(served)
    key = rsa_key() if other_key else None
    answer = _post_token(browser, served, platform, body, key=key, state=state)
    _refused(served, answer, reason, before)


def test_a_replayed_id_token_is_refused_even_with_the_first_cookies(served):
    """An attacker who copied the launch request and its cookies gets nothing."""
    canvas = served.canvas
    course, teacher, learner = _course(canvas)
    Browser(served).launch(canvas, teacher, course)
    browser = Browser(served)
    login = browser.start_login(canvas, learner, course)
    copied = browser.http.cookies.copy()
    form = browser.authorize(login.headers["Location"])
    action = form.pop("action")
    assert browser.post(action, data=form, allow_redirects=False).status_code == 302
    before = _counts(served)
    attacker = Browser(served)
    attacker.http.cookies = copied
    _refused(
        served,
        attacker.post(action, data=form, allow_redirects=False),
        "replayed",
        before,
    )
    # The same browser, whose session used the nonce up, is refused too.
    again = browser.post(action, data=form, allow_redirects=False)
    _refused(served, again, "nonce", before)


def test_a_nonce_used_twice_is_refused(served):
    """A second, different id_token with the launch's nonce is refused."""
    canvas = served.canvas
    course, teacher, learner = _course(canvas)
    Browser(served).launch(canvas, teacher, course)
    browser = Browser(served)
    login = browser.start_login(canvas, learner, course)
    copied = browser.http.cookies.copy()
    form = browser.authorize(login.headers["Location"])
    action = form.pop("action")
    assert browser.post(action, data=form, allow_redirects=False).status_code == 302
    first = jwt.decode(form["id_token"], options={"verify_signature": False})
    second = {**first, "iat": first["iat"] - 1, "jti": uuid.uuid4().hex}
    assert _rows(
        served, select(LtiUsedNonce.nonce).where(LtiUsedNonce.nonce == first["nonce"])
    )
    before = _counts(served)
    attacker = Browser(served)
    attacker.http.cookies = copied
    answer = _post_token(attacker, served, canvas, second, state=form["state"])
    _refused(served, answer, "replayed", before)


def test_a_launch_without_the_state_cookie_is_refused(served):
    canvas = served.canvas
    course, _teacher, learner = _course(canvas)
    _browser, state, nonce = _fresh_login(served, canvas, learner, course)
    body = canvas.claims(learner, course, nonce=nonce)
    before = _counts(served)
    answer = _post_token(Browser(served), served, canvas, body, state=state)
    _refused(served, answer, "state", before)


def test_an_observer_gets_no_account(served):
    canvas = served.canvas
    course, teacher, _learner = _course(canvas)
    Browser(served).launch(canvas, teacher, course)
    parent = canvas.add_person(course, f"p{uuid.uuid4().hex[:6]}", "Parent", "observer")
    before = _counts(served)
    _refused(served, Browser(served).launch(canvas, parent, course), "role", before)


def test_a_refusal_page_is_chinese_by_default_and_english_on_request(served):
    answer = Browser(served).get("/lti/login?iss=https://x.example&login_hint=1")
    assert "这个 LMS 还没有登记" in answer.text
    english = Browser(served).get(
        "/lti/login?iss=https://x.example&login_hint=1&lang=en"
    )
    assert "This LMS is not registered" in english.text
    assert Browser(served).post("/lti/launch", data={"state": "x"}).status_code == 403


def test_classes_are_made_once_per_course(served):
    canvas = served.canvas
    course, teacher, _learner = _course(canvas)
    Browser(served).launch(canvas, teacher, course)
    Browser(served).launch(canvas, teacher, course)
    classes = _rows(
        served,
        select(Classroom.id)
        .join(LtiContext, LtiContext.class_id == Classroom.id)
        .where(LtiContext.context_id == course.id),
    )
    assert len(classes) == 1
