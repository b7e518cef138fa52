"""The iframe launch in Debian's Chromium: a course page of the simulated LMS
(on `localhost`) shows quizsvc (on `127.0.0.1`, another site) in an iframe.

The whole flow runs inside the frame as a browser runs it: the login
initiation, the redirect to the platform's OIDC endpoint, its auto-posted
form, the launch; the learner ends on today's drill, signed in by cookies that
had to cross sites, on pages the platform's origin may frame.
"""

from __future__ import annotations

import re
import uuid

import pytest

from tests.fixtures.browsers import BROWSER_MARKS
from tests.fixtures.lti import served_lti

pytestmark = [*BROWSER_MARKS, pytest.mark.slow]
SCREENSHOT_FOLDER = "lti"


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    with served_lti(tmp_path_factory.mktemp("lti-browser"), None) as running:
        yield running


def _tool_frame(page, tool_url: str, path: str):
    def arrived():
        frame = page.frame(name="tool") or next(
            (f for f in page.frames if f.url.startswith(tool_url)), None
        )
        return frame if frame and frame.url.startswith(tool_url + path) else None

    page.wait_for_function("() => true")  # let the first navigations start
    for _ in range(200):
        frame = arrived()
        if frame is not None:
            frame.wait_for_load_state()
            return frame
        page.wait_for_timeout(100)
    pytest.fail(f"the frame never reached {path}: {[f.url for f in page.frames]}")


@pytest.mark.parametrize("width", [1280, 360])
def test_a_learner_launches_into_the_drill_inside_the_lms_iframe(
    served, browser, shots, width
):
    canvas = served.canvas
    course = canvas.add_course(f"c-{uuid.uuid4().hex[:8]}", "注意力手算")
    teacher = canvas.add_person(course, f"t{uuid.uuid4().hex[:6]}", "王芳", "teacher")
    learner = canvas.add_person(course, f"l{uuid.uuid4().hex[:6]}", "李雷", "learner")
    context = browser.new_context(viewport={"width": width, "height": 900})
    try:
        # The instructor's launch creates the class and lands on its dashboard.
        page = context.new_page()
        page.goto(
            f"{canvas.page_origin}/course/{course.id}?user={_key(canvas, teacher)}"
        )
        frame = _tool_frame(page, served.url.rstrip("/"), "/teacher/classes/")
        assert frame.locator("#lti-panel").count() == 1
        page.close()

        learner_context = browser.new_context(viewport={"width": width, "height": 900})
        page = learner_context.new_page()
        page.goto(
            f"{canvas.page_origin}/course/{course.id}?user={_key(canvas, learner)}"
        )
        frame = _tool_frame(page, served.url.rstrip("/"), "/drill")
        assert frame.locator("#answer-form").count() == 1
        frame.goto(served.url + "drill?lang=zh-CN")
        assert frame.locator("html").get_attribute("lang") == "zh-CN"
        assert frame.locator("#answer-form").count() == 1
        cookies = learner_context.cookies(served.url)
        session = next(c for c in cookies if c["name"] == "session")
        assert session["sameSite"] == "None" and session["secure"]
        page.screenshot(path=str(shots / f"lti-drill-in-iframe-{width}.png"))
        learner_context.close()
    finally:
        context.close()


def _key(platform, person) -> str:
    return next(key for key, p in platform.people.items() if p is person)


def test_pages_outside_the_lms_may_not_be_framed(served, browser):
    """A site that is not the platform cannot show quizsvc in a frame."""
    context = browser.new_context()
    try:
        page = context.new_page()
        blocked = []
        page.on("console", lambda message: blocked.append(message.text))
        html = f'<iframe id="x" src="{served.url}lab"></iframe>'
        page.route(
            "http://evil.example/",
            lambda route: route.fulfill(body=html, content_type="text/html"),
        )
        page.goto("http://evil.example/")
        page.wait_for_timeout(1500)
        frame = next(f for f in page.frames if f is not page.main_frame)
        assert not re.search("实验台|Attention lab", frame.content())
    finally:
        context.close()
