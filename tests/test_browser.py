"""A real browser (Debian's Chromium driven by Playwright) against `quizsvc serve`.

Register, do a drill with a wrong closed-book answer, write the explanation,
see the note link appear, solve a practice problem through the cell grid, rate
a skill, open progress; screenshots of each page in zh-CN and en are saved in
a folder the test prints (QUIZSVC_SCREENSHOT_DIR chooses it).
"""

from __future__ import annotations

import os
import shutil
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from quizsvc import bank, problems
from tests.test_serve import start_server, stop_server

BANK = bank.load()
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not Path(CHROMIUM).exists(),
        reason="Debian's chromium is not installed (.ci/run installs it "
        "with apt-get install -y chromium)",
    ),
]


@pytest.fixture(scope="module")
def server_instance(tmp_path_factory):
    return tmp_path_factory.mktemp("browser-instance")


@pytest.fixture(scope="module")
def server(server_instance):
    process, url = start_server(server_instance)
    yield url
    stop_server(process)


@pytest.fixture(scope="module")
def shots(tmp_path_factory):
    folder = Path(
        os.environ.get("QUIZSVC_SCREENSHOT_DIR")
        or tmp_path_factory.mktemp("screenshots")
    )
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture(scope="module")
def browser():
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, args=CHROMIUM_ARGS
        )
        yield browser
        browser.close()


def snap(page, shots: Path, name: str) -> None:
    page.screenshot(path=str(shots / f"{name}.png"), full_page=True)


def test_learner_journey_in_both_languages(server, browser, shots, capsys):
    with capsys.disabled():
        print(f"\nscreenshots: {shots}")
    context = browser.new_context(
        viewport={"width": 360, "height": 760}, locale="zh-CN"
    )
    page = context.new_page()

    # Register (zh-CN is the default language).
    page.goto(server + "register")
    assert page.locator("html").get_attribute("lang") == "zh-CN"
    page.fill("#username", "xiaoming")
    page.fill("#password", "attention-by-hand")
    page.fill("#confirm", "attention-by-hand")
    snap(page, shots, "01-register-zh")
    page.click("button[type=submit]")
    page.wait_for_url("**/today")
    snap(page, shots, "02-today-zh")

    # The drill: a closed-book item with no way to the lesson note.
    page.click("#start")
    page.wait_for_url("**/drill")
    assert page.locator("a[href*='/notes/']").count() == 0
    snap(page, shots, "03-drill-item-zh")
    # A wrong answer on purpose: the score matrix is not what gets summed.
    page.check("input[name=answer][value=d]")
    page.keyboard.press("Enter")
    page.wait_for_url("**/drill/result/*")
    assert page.locator("#why-form").is_visible()
    assert page.locator("#note-link").count() == 0
    snap(page, shots, "04-drill-wrong-zh")
    page.fill("#why", "我把分数 S 当成了权重,忘了 softmax。")
    page.click("#why-form button[type=submit]")
    page.wait_for_selector("#note-link")
    snap(page, shots, "05-drill-explained-zh")
    page.click("#note-link")
    page.wait_for_selector("#note")
    snap(page, shots, "06-note-zh")

    # Practice: solve a generated problem through the cell grid.
    problem = problems.generate("attention", 7, 1)
    page.goto(server + "practice/attention/1/7")
    for ask in problem.ask:
        value = problem.answer_json(ask.name)
        if ask.format in ("matrix", "boolean_matrix"):
            for i, row in enumerate(value):
                for j, cell in enumerate(row):
                    page.fill(f"input[name='cell-{ask.name}-{i}-{j}']", str(cell))
        else:
            page.fill(f"input[name='answer-{ask.name}']", str(value))
    snap(page, shots, "07-practice-filled-zh")
    page.click("#check-answer")
    page.wait_for_selector("#verdict")
    assert page.locator("#verdict.correct").count() == 1
    snap(page, shots, "08-practice-checked-zh")

    # Rate a skill, then open progress.
    page.goto(server + "assess")
    page.check("input[name=level][value='2'] >> nth=0")
    page.locator("form.assess-skill button[type=submit] >> nth=0").click()
    page.wait_for_load_state()
    snap(page, shots, "09-assess-zh")
    page.goto(server + "progress")
    assert page.locator("svg").count() >= 2
    snap(page, shots, "10-progress-zh")

    # The same pages in English.
    for number, path in [
        ("11", "today"),
        ("12", "drill"),
        ("13", "practice/attention/1/7"),
        ("14", "assess"),
        ("15", "progress"),
        ("16", "settings"),
    ]:
        page.goto(server + path + "?lang=en")
        assert page.locator("html").get_attribute("lang") == "en"
        snap(page, shots, f"{number}-{path.split('/')[0]}-en")
    context.close()
    assert len(list(shots.glob("*.png"))) >= 16


def open_problem_seed(database: Path, item_id: str) -> tuple[str, int, int]:
    """Which generated problem the server opened for this item (read from its DB)."""
    with closing(sqlite3.connect(database)) as connection:
        row = connection.execute(
            "SELECT problem_kind, problem_seed, problem_level FROM open_items "
            "WHERE item_id = ?",
            (item_id,),
        ).fetchone()
    return row


def answer_open_item(page, database: Path) -> None:
    """Answer the item the drill shows, correctly, as a prepared learner would."""
    item_id = page.locator("input[name=item_id]").first.get_attribute("value")
    question = BANK.questions[item_id]
    kind = question.type
    if kind == "recall":
        page.fill("#attempt", "凭记忆写下的回答")
        page.click("#answer-form button[type=submit]")
        page.wait_for_selector("#rate-form")
        page.keyboard.press("3")  # "Good", by keyboard
    else:
        if kind == "choice":
            for option in question.data["options"]:
                if option["correct"]:
                    page.check(f"input[name=answer][value='{option['id']}']")
        elif kind == "ordering":
            for position, step in enumerate(question.data["steps"]):
                page.select_option(f"#order-{position}", step["id"])
        elif kind == "generated":
            problem = problems.generate(*open_problem_seed(database, item_id))
            for ask in problem.ask:
                value = problem.answer_json(ask.name)
                if ask.format == "matrix":
                    for i, row in enumerate(value):
                        for j, cell in enumerate(row):
                            page.fill(
                                f"input[name='cell-{ask.name}-{i}-{j}']",
                                "undefined" if cell is None else str(cell),
                            )
                elif ask.format == "boolean_matrix":
                    for i, row in enumerate(value):
                        for j, cell in enumerate(row):
                            box = page.locator(f"input[name='cell-{ask.name}-{i}-{j}']")
                            box.set_checked(bool(cell))
                elif ask.format == "choice":
                    page.check(f"input[name='answer-{ask.name}'][value='{value}']")
                else:
                    page.fill(f"input[name='answer-{ask.name}']", str(value))
        elif kind == "numeric":
            page.fill("#answer", str(question.data["answer"]))
        else:
            page.fill("#answer", question.data["accepted"][0])
        page.click("#submit-answer")
    page.wait_for_selector("#result, #answer-error")


def test_a_full_daily_drill_in_chinese(server, browser, shots, server_instance):
    """Can a newcomer register and finish a whole day's drill in the browser?"""
    database = server_instance / "quizsvc.sqlite3"
    context = browser.new_context(viewport={"width": 360, "height": 760})
    page = context.new_page()
    page.goto(server + "register")
    page.fill("#username", "xiaohong")
    page.fill("#password", "attention-by-hand")
    page.fill("#confirm", "attention-by-hand")
    page.click("button[type=submit]")
    page.wait_for_url("**/today")
    page.click("#start")
    answered = wrong = 0
    for _ in range(80):
        if page.locator("#drill-done").count():
            break
        if page.locator("#why-form").count():
            wrong += 1
            page.fill("#why", "我没有记清楚这一步的定义。")
            page.click("#why-form button[type=submit]")
            page.wait_for_selector("#note-link")
        if page.locator("#next").count():
            page.click("#next")
            page.wait_for_load_state()
            continue
        assert page.locator("article.item").count() == 1, page.content()[:2000]
        assert page.locator("a[href*='/notes/']").count() == 0
        answer_open_item(page, database)
        if page.locator("#answer-error").count():
            pytest.fail(
                "an answer the drill could not read: "
                + page.locator("#answer-error").inner_text()
            )
        answered += 1
    assert page.locator("#drill-done").count() == 1, "the drill did not finish"
    assert answered >= 10 and wrong == 0
    snap(page, shots, "17-drill-done-zh")
    page.goto(server + "today")
    assert page.locator("#new-count").inner_text() == "0"
    snap(page, shots, "18-today-after-zh")
    context.close()
