"""The teacher's overview, a learner's page and the Canvas export form in a real
browser at 360 px and at 1280 px (Chromium via Playwright).

A learner joins and answers a few items; the teacher then, at each width,
reads the overview (the learner's name stays in view while the figures scroll
on a phone), opens the learner's page, and uses the grade form: chooses the
retention rule and 12 points, sees the Grade column change, and downloads the
Canvas CSV, whose points row and grades match the page.
"""

from __future__ import annotations

import re

from tests.fixtures.browsers import BROWSER_MARKS, create_teacher
from tests.fixtures.teacher_steps import download, drill, read_csv, register, sign_in

pytestmark = BROWSER_MARKS
BROWSER_ARGS = ["--lang=zh-CN"]
SCREENSHOT_FOLDER = "teacher-phone"
WIDTHS = {"phone": 360, "desktop": 1280}


def no_sideways_scroll(page) -> None:
    overflow = page.evaluate(
        "document.documentElement.scrollWidth - document.documentElement.clientWidth"
    )
    assert overflow <= 1, "the page scrolls sideways"


def test_overview_learner_page_and_canvas_form_at_both_widths(
    server, browser, shots, server_instance
):
    database = server_instance / "quizsvc.sqlite3"
    create_teacher(server_instance, "wang")
    teacher, page = sign_in(browser, server, "wang", 1280)
    page.click("#nav-teacher")
    page.wait_for_url("**/teacher/")
    page.fill("#class-name", "高二（3）班")
    page.click("#create-class button[type=submit]")
    page.wait_for_url("**/settings")
    code = page.locator("#join-code").inner_text()
    class_url = page.url.rsplit("/settings", 1)[0]
    teacher.close()

    learner, mei = register(browser, server, "xiaomei")
    mei.goto(server + f"join/{code}")
    # The join page lists what the teacher will see and offers the choice.
    sees = mei.locator("#teacher-sees").inner_text()
    assert "只显示你做了自评以及你选的等级" in sees
    assert mei.locator("#share-history").is_visible()
    mei.fill("#student-number", "2026001")
    mei.fill("#display-name", "李小梅")
    mei.click("#join-button")
    mei.wait_for_url("**/classes")
    drill(mei, server, database, answers=4, wrong_first=True)
    learner.close()

    for label, width in WIDTHS.items():
        context, page = sign_in(browser, server, "wang", width)
        page.goto(class_url)
        # The nav shows every entry (it wraps; nothing hidden past an edge).
        for link in page.locator("nav.class-nav a").all():
            box = link.bounding_box()
            assert box and box["x"] >= 0 and box["x"] + box["width"] <= width + 1
        name = page.locator("#learner-table tbody th[scope=row]").first
        assert "李小梅" in name.inner_text()
        grade = page.locator("#learner-table td.grade").first
        default_grade = grade.inner_text()
        assert re.fullmatch(r"\d+(\.\d)?", default_grade)
        if label == "phone":
            # Scroll the table to its end: the name stays in view (sticky).
            page.locator(".table-wrap").first.evaluate(
                "wrap => wrap.scrollLeft = wrap.scrollWidth"
            )
            box = name.bounding_box()
            assert box and 0 <= box["x"] < 60
        no_sideways_scroll(page)
        page.screenshot(path=str(shots / f"overview-{label}.png"), full_page=True)

        # The grade form: retention on a day, 12 points; the column follows.
        page.select_option("#grade-rule", "retention")
        page.fill("#grade-points", "12")
        page.click("#grade-preview")
        page.wait_for_load_state()
        heading = page.locator("#grade-heading").inner_text()
        assert "记忆保持" in heading
        shown = float(page.locator("#learner-table td.grade").first.inner_text())
        assert 0 <= shown <= 12
        no_sideways_scroll(page)
        saved = download(page, "#export-canvas", page.url)
        rows = read_csv(saved)
        assert rows[0][:5] == [
            "Student",
            "ID",
            "SIS User ID",
            "SIS Login ID",
            "Section",
        ]
        assert "记忆保持" in rows[0][5]  # the column title in the export's language
        assert rows[1][0] == "Points Possible" and float(rows[1][5]) == 12
        (row,) = rows[2:]
        assert row[2] == "2026001" and row[3] == "xiaomei"
        assert abs(float(row[5]) - shown) <= 0.1

        # The learner's page, on the same widths; and how it prints.
        page.goto(class_url)
        page.locator("#learner-table tbody th[scope=row] a").first.click()
        page.wait_for_selector("#review-table")
        no_sideways_scroll(page)
        page.screenshot(path=str(shots / f"learner-{label}.png"), full_page=True)
        page.emulate_media(media="print")
        assert not page.locator("header.site").is_visible()
        page.emulate_media(media="screen")
        context.close()
