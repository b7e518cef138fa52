"""A teacher and two learners in a real browser (Chromium via Playwright).

The teacher (made with `quizsvc users create --role teacher`) creates a class;
two learners register, join it with the code (one through the join link),
and answer a few drill items, one of them wrong and explained; the teacher
then opens every dashboard page and downloads every export (the test reads
the CSV, XLSX and xAPI files), and a learner downloads their own history from
Settings. Screenshots of every teacher page in zh-CN,
at desktop width and at 360 px, go to QUIZSVC_SCREENSHOT_DIR/teacher (or a
temporary folder the test prints).
"""

from __future__ import annotations

import json
import re
import sqlite3
from contextlib import closing
from datetime import datetime
from pathlib import Path

import openpyxl

from tests.factories import validate_statement
from tests.fixtures.browsers import BROWSER_MARKS, create_teacher
from tests.fixtures.teacher_steps import (
    download,
    drill,
    read_csv,
    register,
    sign_in,
)

pytestmark = BROWSER_MARKS
# The browser's own widgets (date and file inputs) in Chinese too.
BROWSER_ARGS = ["--lang=zh-CN"]
SCREENSHOT_FOLDER = "teacher"

WIDTHS = {"desktop": 1280, "phone": 360}
# Latin words a zh-CN page may show: names of products, formats and people.
ALLOWED_LATIN = {
    "quizsvc", "English", "Excel", "WPS", "Canvas", "xAPI", "CSV", "XLSX", "JSONL",
    "FSRS", "UTF", "softmax", "Asia", "Shanghai", "xiaolei", "xiaomei", "wang",
    # the lesson's terms, as the bank's Chinese text writes them (an ordering
    # answer is shown as the steps the learner picked)
    "query", "key",
    # the LMSs the plain gradebook is for, and the encodings rosters come in
    "Moodle", "Blackboard", "GBK",
}  # fmt: skip


def count_reviews(database: Path, username: str) -> int:
    with closing(sqlite3.connect(database)) as connection:
        return connection.execute(
            "SELECT count(*) FROM reviews JOIN users ON users.id = reviews.user_id "
            "WHERE users.username = ?",
            (username,),
        ).fetchone()[0]


def check_downloads(page, class_url: str, database: Path) -> None:
    """Download every export from the overview's buttons and read the files."""
    learners = {"xiaomei", "xiaolei"}
    answers = sum(count_reviews(database, name) for name in learners)

    def get(kind: str, file_format: str) -> Path:
        selector = f"#exports a[data-kind={kind}][data-format={file_format}]"
        return download(page, selector, class_url)

    first = get("reviews", "csv")
    assert first.name.startswith("高二（3）班-reviews") and first.suffix == ".csv"
    reviews = read_csv(first)
    assert reviews[0][:4] == ["记录编号", "学习者编号", "学号", "姓名"]
    assert len(reviews) - 1 == answers
    assert {row[4] for row in reviews[1:]} == learners
    assert {(row[2], row[3]) for row in reviews[1:] if row[4] == "xiaomei"} == {
        ("2026001", "李小梅")
    }
    assert any("忘了先做 softmax" in row[-1] for row in reviews[1:])
    sheet = openpyxl.load_workbook(get("reviews", "xlsx"))["答题记录"]
    rows = list(sheet.iter_rows(min_row=2, values_only=True))
    assert sorted(row[0] for row in rows) == sorted(int(r[0]) for r in reviews[1:])
    assert all(isinstance(row[9], datetime) for row in rows)
    summary = read_csv(get("summary", "csv"))
    assert sorted(row[3] for row in summary[1:]) == sorted(learners)
    book = openpyxl.load_workbook(get("summary", "xlsx"))["班级概况"]
    totals = {row[3]: row[4] for row in book.iter_rows(min_row=2, values_only=True)}
    assert totals == {name: count_reviews(database, name) for name in learners}
    # Canvas comes from the grade form: its button takes the rule and points.
    canvas = read_csv(download(page, "#export-canvas", class_url))
    assert canvas[0][:5] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
    assert canvas[1][0] == "Points Possible"
    assert sorted(row[2] for row in canvas[2:]) == ["2026001", "2026002"]
    lines = get("xapi", "jsonl").read_text("utf-8").splitlines()
    assert len(lines) == answers
    for line in lines:
        validate_statement(json.loads(line))
    workbook = openpyxl.load_workbook(get("workbook", "xlsx"))
    assert workbook.sheetnames == ["答题记录", "班级概况", "成绩"]


def snap_everywhere(context_for, url: str, shots: Path, name: str, code: str) -> None:
    """Screenshot one page at both widths; check it shows no English or ids.

    The join code is the one run of Latin letters a page may show.
    """
    for label, page in context_for.items():
        page.goto(url)
        page.wait_for_load_state()
        assert page.locator("html").get_attribute("lang") == "zh-CN"
        text = page.locator("body").inner_text().replace(code, "")
        latin = set(re.findall(r"[A-Za-z]{3,}", text)) - ALLOWED_LATIN
        assert not latin, (name, label, sorted(latin))
        assert not re.search(r"\bl16-[a-z-]+", text), (name, "an item id")
        page.screenshot(path=str(shots / f"{name}-{label}.png"), full_page=True)
        overflow = page.evaluate(
            "document.documentElement.scrollWidth"
            " - document.documentElement.clientWidth"
        )
        assert overflow <= 1, (name, label, "the page scrolls sideways")


def test_a_teacher_creates_a_class_learners_join_and_the_dashboard_shows_them(
    server, browser, shots, server_instance, capsys
):
    with capsys.disabled():
        print(f"\nteacher screenshots: {shots}")
    database = server_instance / "quizsvc.sqlite3"
    create_teacher(server_instance, "wang")
    teacher, page = sign_in(browser, server, "wang", WIDTHS["desktop"])
    page.click("#nav-teacher")
    page.wait_for_url("**/teacher/")
    page.fill("#class-name", "高二（3）班")
    page.fill("#class-term", "2026 秋季")
    page.click("#create-class button[type=submit]")
    page.wait_for_url("**/settings")
    code = page.locator("#join-code").inner_text()
    join_url = page.locator("#join-url").input_value()
    class_url = page.url.rsplit("/settings", 1)[0]
    assert len(code) == 8 and join_url.endswith(f"/join/{code}")

    # Two learners join: one types the code, one follows the link.
    mei_context, mei = register(browser, server, "xiaomei")
    mei.click("#join-class-link a")
    mei.fill("#join-code", code.lower())
    mei.fill("#student-number", "2026001")
    mei.fill("#display-name", "李小梅")
    mei.screenshot(path=str(shots / "join-form-phone.png"), full_page=True)
    mei.click("#join-button")
    mei.wait_for_url("**/classes")
    assert "高二（3）班" in mei.locator("#my-classes").inner_text()
    lei_context, lei = register(browser, server, "xiaolei")
    lei.goto(join_url)
    assert "加入“高二（3）班”" in lei.locator("h2#join-title").inner_text()
    assert lei.locator("#teacher-sees").is_visible()
    lei.screenshot(path=str(shots / "join-link-phone.png"), full_page=True)
    lei.fill("#student-number", "2026002")
    lei.click("#join-button")
    lei.wait_for_url("**/classes")

    drill(mei, server, database, answers=4, wrong_first=True)
    drill(lei, server, database, answers=3, wrong_first=False)
    own = download(mei, "#export-own-csv", server + "settings")
    own_rows = read_csv(own)
    assert len(own_rows) - 1 == count_reviews(database, "xiaomei") > 0
    assert {row[4] for row in own_rows[1:]} == {"xiaomei"}
    mei_context.close()
    lei_context.close()

    # The teacher's pages, at desktop width and on a phone, in zh-CN.
    phone, phone_page = sign_in(browser, server, "wang", WIDTHS["phone"])
    pages = {"desktop": page, "phone": phone_page}

    page.goto(class_url)
    rows = page.locator("#learner-table tbody tr")
    assert rows.count() == 2
    assert "李小梅" in page.locator("#learner-table").inner_text()
    assert page.locator("svg.recall-grid").count() == 1
    learner_link = page.locator("#learner-table tbody tr >> nth=0 >> a").first
    learner_url = server.rstrip("/") + learner_link.get_attribute("href")

    explanations = class_url + "/explanations"
    page.goto(explanations)
    assert "忘了先做 softmax。<b>" in page.locator("main").inner_text()

    for name, url in [
        ("01-classes", server + "teacher/"),
        ("02-overview", class_url),
        ("03-misconceptions", class_url + "/misconceptions"),
        ("04-items", class_url + "/items"),
        ("05-explanations", explanations),
        ("06-calibration", class_url + "/calibration"),
        ("07-learner", learner_url),
        ("08-settings", class_url + "/settings"),
    ]:
        snap_everywhere(pages, url, shots, name, code)
    check_downloads(page, class_url, database)
    teacher.close()
    phone.close()
    assert len(list(shots.glob("*.png"))) == 2 + 2 * 8
