"""Accessibility, measured in a real browser (Debian's Chromium, axe-core 4.12).

Every page a learner or a teacher uses, in each state that shows something
new (each drill item type, results before and after the explanation, a
format error, a checked practice problem, a computed lab, moved sliders), is
checked at 1280 px and at 320 px CSS width, in zh-CN and in English:
- axe-core (WCAG 2.1 A and AA rules) finds no violation;
- no contrast check is left undecided because of a background gradient;
- the page does not scroll sideways (WCAG 1.4.10 reflow), nor at 640 px (200 % zoom);
- zh pages show no internal code in a tooltip; en pages mark Chinese text
  (learners' names, explanations) with lang="zh-CN".

Set QUIZSVC_A11Y_REPORT to a file name to get every page's figures as JSON.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from quizsvc import bank, problems
from tests.factories import contrast, rgb
from tests.fixtures.browsers import (
    BROWSER_MARKS,
    create_teacher,
    register,
    reopen_as,
    sign_in,
)

pytestmark = [*BROWSER_MARKS, pytest.mark.slow]
SCREENSHOT_FOLDER = "a11y"

AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
WIDTHS = (1280, 320)
# 1280 px at 200 % zoom: checked for sideways scrolling only.
ZOOMED = 640
BANK = bank.load()

# One item of each type; the generated one as three 4×4 matrices (S, A, O).
WIDE = ("attention", 8, 3)
DRILL_ITEMS = [
    ("choice", "l16-hand-diagnose", (None, None, None)),
    ("numeric", "l16-hand-lesson-weight", (None, None, None)),
    ("cloze", "l16-impl-causal-flag", (None, None, None)),
    ("recall", "l16-hand-recite-example", (None, None, None)),
    ("ordering", "l16-hand-order-of-steps", (None, None, None)),
    ("generated 4×4", "l16-hand-generated-hard", WIDE),
    ("generated causal", "l16-masking-generated-causal", ("causal", 1, 2)),
]
# A fully masked row makes the lab show undefined weights.
LAB_QUERY = (
    "lab?q=[[1,0],[0,1]]&k=[[1,0],[0,1]]&v=[[1,0],[0,2]]&mask=[[0,0],[-inf,-inf]]"
)
# Words that may only appear in a tooltip as an internal identifier.
INTERNAL_CODE = re.compile(r"^[a-z]+(_[a-z]+)*$|^[A-Z][0-9_]*$")
CJK = r"[\u3400-\u9fff\u3000-\u303f\uff00-\uffef]"


def axe_results(page) -> dict:
    """Run axe-core on the page: its violations and undecided contrast checks."""
    from axe_playwright_python.sync_playwright import Axe

    options = {
        "runOnly": {"type": "tag", "values": AXE_TAGS},
        "resultTypes": ["violations", "incomplete"],
    }
    return Axe().run(page, options=options).response


@dataclass
class Findings:
    """What the checks found on every page, by (page, language, width)."""

    pages: dict[str, dict] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    def check(self, page, name: str, lang: str, width: int, shots: Path) -> None:
        """Run every check on the page as it is now."""
        key = f"{name} | {lang} | {width}"
        response = axe_results(page)
        violations = {
            v["id"]: [", ".join(map(str, n["target"])) for n in v["nodes"]]
            for v in response["violations"]
        }
        gradient = sum(
            1
            for rule in response["incomplete"]
            if rule["id"] == "color-contrast"
            for node in rule["nodes"]
            for check in node["any"]
            if (check.get("data") or {}).get("messageKey") == "bgGradient"
        )
        overflow = page.evaluate(
            "document.documentElement.scrollWidth"
            " - document.documentElement.clientWidth"
        )
        self.pages[key] = {
            "violations": {rule: len(nodes) for rule, nodes in violations.items()},
            "gradient": gradient,
            "overflow": overflow,
        }
        for rule, nodes in violations.items():
            self.problems.append(f"{key}: axe {rule} on {nodes[:4]}")
        if gradient:
            self.problems.append(
                f"{key}: {gradient} contrast checks hidden by gradients"
            )
        if overflow > 1:
            self.problems.append(f"{key}: the page scrolls sideways by {overflow} px")
        for problem in language_problems(page, lang):
            self.problems.append(f"{key}: {problem}")
        if lang == "zh-CN":
            safe = re.sub(r"[^\w-]+", "_", name)
            page.screenshot(path=str(shots / f"{safe}-{width}.png"), full_page=True)

    def save(self, lang: str) -> None:
        target = os.environ.get("QUIZSVC_A11Y_REPORT")
        if not target:
            return
        path = Path(target)
        saved = json.loads(path.read_text()) if path.exists() else {}
        saved.update(self.pages)
        path.write_text(json.dumps(saved, ensure_ascii=False, indent=1))


def language_problems(page, lang: str) -> list[str]:
    """Internal codes in tooltips (any page), unmarked Chinese on English pages."""
    found = []
    for title in page.locator("main [title]").evaluate_all(
        "nodes => nodes.map(n => n.getAttribute('title'))"
    ):
        if INTERNAL_CODE.match(title.strip()):
            found.append(f"an internal code in a tooltip: {title!r}")
    if lang == "en":
        unmarked = page.evaluate(
            """(pattern) => {
                const cjk = new RegExp(pattern);
                const walker = document.createTreeWalker(
                    document.body, NodeFilter.SHOW_TEXT);
                const out = [];
                for (let n = walker.nextNode(); n; n = walker.nextNode()) {
                    const host = n.parentElement;
                    if (!cjk.test(n.data)) continue;
                    if (host.closest('script, style, svg')) continue;
                    const marked = host.closest('[lang]');
                    if (!marked || !marked.lang.startsWith('zh'))
                        out.push(n.data.trim().slice(0, 40));
                }
                return out;
            }""",
            CJK,
        )
        found += [f"Chinese text without lang=zh-CN: {text!r}" for text in unmarked]
    return found


def each_width(findings, page, name, lang, shots, go) -> None:
    """Open a page state at each width and check it there."""
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        go(page)
        page.wait_for_load_state()
        findings.check(page, name, lang, width, shots)
    page.set_viewport_size({"width": ZOOMED, "height": 450})
    go(page)
    page.wait_for_load_state()
    overflow = page.evaluate(
        "document.documentElement.scrollWidth - document.documentElement.clientWidth"
    )
    if overflow > 1:
        findings.problems.append(f"{name} | {lang} | 200 %: scrolls sideways")


def goto(server: str, path: str):
    return lambda page: page.goto(server + path)


def fill_matrices(page, problem: problems.Problem, wrong: bool = False) -> None:
    """Type a problem's answers into its cells (every entry off by 1 when wrong)."""
    for ask in problem.ask:
        for i, row in enumerate(problem.answer_json(ask.name)):
            for j, cell in enumerate(row):
                if cell is None:
                    cell = "未定义"
                elif wrong and isinstance(cell, (int, float)):
                    cell += 1
                page.fill(f"input[name='cell-{ask.name}-{i}-{j}']", str(cell))


def open_item(page, server, database, user, item_id, problem=(None, None, None)):
    """Show this item in the learner's drill (the page first opens one to replace)."""
    page.goto(server + "drill")
    reopen_as(database, user, item_id, problem)
    page.goto(server + "drill")


def learner_pages(page, server: str, database: Path, user: str, code: str):
    """Walk a learner's pages; yield (name, how to open it again) at each state."""
    page.goto(server + f"join/{code}")
    chinese = user.endswith("zh")
    page.fill("#student-number", "2026001" if chinese else "2026002")
    page.fill("#display-name", "李小梅" if chinese else "王小雷")
    page.click("#join-button")
    page.wait_for_url("**/classes")
    yield "classes", goto(server, "classes")
    yield "today", goto(server, "today")

    for label, item_id, problem in DRILL_ITEMS:

        def show(page, item_id=item_id, problem=problem):
            open_item(page, server, database, user, item_id, problem)

        yield f"drill: {label}", show

    def revealed(page):
        open_item(page, server, database, user, "l16-hand-recite-example")
        page.fill("#attempt", "S = QKᵀ/√d")
        page.click("#answer-form button[type=submit]")
        page.wait_for_selector("#rate-form")

    yield "drill: recall revealed", revealed

    def format_error(page):
        open_item(page, server, database, user, "l16-hand-generated-hard", WIDE)
        page.fill("input[name='cell-S-0-0']", "0.5")
        page.click("#submit-answer")
        page.wait_for_selector("#answer-error")

    yield "drill: format error", format_error

    # A right choice, then a wrong 4×4 item before and after the explanation.
    question = BANK.questions["l16-hand-diagnose"]
    open_item(page, server, database, user, question.id)
    for option in question.data["options"]:
        if option["correct"]:
            page.check(f"input[name=answer][value='{option['id']}']")
    page.click("#submit-answer")
    page.wait_for_url("**/drill/result/*")
    yield "result: choice right", goto(server, page.url.split("/", 3)[3])

    open_item(page, server, database, user, "l16-hand-generated-hard", WIDE)
    fill_matrices(page, problems.generate(*WIDE), wrong=True)
    page.click("#submit-answer")
    page.wait_for_url("**/drill/result/*")
    result = page.url.split("/", 3)[3]
    yield "result: 4×4 wrong, before the explanation", goto(server, result)
    page.goto(server + result)
    page.fill("#why", "我把每个数都多算了 1，没有检查。")
    page.click("#why-form button[type=submit]")
    page.wait_for_selector("#note-link")
    yield "result: 4×4 wrong, explained", goto(server, result)

    yield "practice: choose", goto(server, "practice")
    yield "practice: 4×4", goto(server, "practice/attention/3/8")

    def checked(page, kind="attention", level=3, seed=8):
        page.goto(server + f"practice/{kind}/{level}/{seed}")
        problem = problems.generate(kind, seed, level)
        first = problem.ask[0]
        if first.format == "boolean_matrix":
            page.locator("input[name^='cell-'][type=checkbox] >> nth=0").check()
        else:
            fill_matrices(page, problem, wrong=True)
        page.click("#check-answer")
        page.wait_for_selector("#verdict")

    yield "practice: 4×4 checked", checked
    yield "practice: causal checked", lambda p: checked(p, "causal", 1, 1)

    def practice_error(page):
        page.goto(server + "practice/attention/3/8")
        page.fill("input[name='cell-S-1-2']", "zwei")
        page.click("#check-answer")
        page.wait_for_selector(".error")

    yield "practice: format error", practice_error
    yield "lab", goto(server, "lab")
    yield "lab: computed, undefined rows", goto(server, LAB_QUERY)
    yield "explore", goto(server, "explore")

    def moved(page):
        page.goto(server + "explore")
        page.focus("#explore-t")
        for _ in range(10):
            page.keyboard.press("ArrowLeft")
        page.focus("#explore-d")
        page.keyboard.press("End")

    yield "explore: sliders moved", moved

    page.goto(server + "assess")
    page.check("input[name=level][value='2'] >> nth=0")
    page.locator("form.assess-skill button[type=submit] >> nth=0").click()
    page.wait_for_load_state()
    yield "self-assessment", goto(server, "assess")
    yield "progress", goto(server, "progress")
    yield "settings", goto(server, "settings")


def teacher_pages(page, server: str, class_url: str):
    """The teacher's pages for a class with two learners' answers."""
    yield "teacher: my classes", goto(server, "teacher/")
    yield "teacher: overview", goto(class_url, "")
    page.goto(class_url)
    learner = page.locator("#learner-table tbody tr a").first.get_attribute("href")
    yield "teacher: learner", goto(server, learner.lstrip("/"))
    for name in ("misconceptions", "items", "explanations", "calibration", "settings"):
        yield f"teacher: {name}", goto(class_url, f"/{name}")


@pytest.fixture(scope="module")
def classroom(server, browser, server_instance):
    """A teacher's class (name in Chinese) and its join code."""
    create_teacher(server_instance, "laoshi")
    context = browser.new_context(locale="zh-CN")
    page = context.new_page()
    sign_in(page, server, "laoshi")
    page.goto(server + "teacher/")
    page.fill("#class-name", "注意力一班")
    page.fill("#class-term", "2026 秋季")
    page.click("#create-class button[type=submit]")
    page.wait_for_url("**/settings")
    code = page.locator("#join-code").inner_text()
    class_url = page.url.rsplit("/settings", 1)[0]
    context.close()
    return class_url, code


@pytest.mark.parametrize("lang", ["zh-CN", "en"])
def test_every_page_passes_axe_reflows_and_marks_its_languages(
    lang, server, browser, server_instance, classroom, shots
):
    """At 1280 and 320 px, in this language: is every page free of axe
    violations and sideways scrolling, with its text's language marked?"""
    class_url, code = classroom
    database = server_instance / "quizsvc.sqlite3"
    findings = Findings()
    user = "duzhe_" + ("zh" if lang == "zh-CN" else "en")
    context = browser.new_context(locale="zh-CN")
    page = context.new_page()
    # Signed out first: the sign-in and registration pages.
    suffix = "?lang=en" if lang == "en" else ""
    for name in ("login", "register"):
        each_width(findings, page, name, lang, shots, goto(server, name + suffix))
    register(page, server, user)
    if lang == "en":
        page.goto(server + "today?lang=en")
    for name, go in learner_pages(page, server, database, user, code):
        each_width(findings, page, name, lang, shots, go)
    context.close()

    context = browser.new_context(locale="zh-CN")
    page = context.new_page()
    sign_in(page, server, "laoshi")
    if lang == "en":
        page.goto(server + "today?lang=en")
    for name, go in teacher_pages(page, server, class_url):
        each_width(findings, page, name, lang, shots, go)
    context.close()
    findings.save(lang)
    assert not findings.problems, "\n".join(findings.problems)


# --- the keyboard alone ------------------------------------------------------------


class Keyboard:
    """The page's keyboard, counting the keys pressed (typed text is not counted)."""

    def __init__(self, page):
        self.page = page
        self.pressed = 0

    def press(self, key: str) -> None:
        self.page.keyboard.press(key)
        self.pressed += 1

    def type(self, text: str) -> None:
        self.page.keyboard.type(text)


def focused(page) -> dict:
    """The element that has the focus: its id, name and tag."""
    return page.evaluate(
        "() => { const e = document.activeElement;"
        " return {id: e.id, name: e.getAttribute('name') || '',"
        " tag: e.tagName.toLowerCase(), text: e.textContent.trim().slice(0, 60)}; }"
    )


def typed(cell) -> str:
    return "-inf" if cell == "-inf" else f"{cell:.4f}"


def test_a_4x4_item_by_keyboard_alone_in_at_most_25_key_presses(
    server, browser, server_instance, capsys
):
    """Can a learner answer a 4×4 generated item wrongly, explain it and go on
    with the keyboard alone, the focus landing where the work is at each step,
    in at most 25 key presses beyond typing?"""
    database = server_instance / "quizsvc.sqlite3"
    context = browser.new_context(
        locale="zh-CN", viewport={"width": 1280, "height": 900}
    )
    page = context.new_page()
    register(page, server, "jianpan")
    problem = problems.generate("scores", 8, 3)
    open_item(page, server, database, "jianpan", "l16-hand-generated-hard", (
        "scores", 8, 3,
    ))  # fmt: skip
    keys = Keyboard(page)

    # The first cell has the focus; Tab goes from cell to cell.
    answer = problem.answer_json("S")
    answer[0][3] = 9.5  # one wrong cell
    for i, row in enumerate(answer):
        for j, cell in enumerate(row):
            if (i, j) != (0, 0):
                keys.press("Tab")
            assert focused(page)["name"] == f"cell-S-{i}-{j}"
            keys.type(typed(cell))
    keys.press("Enter")
    page.wait_for_url("**/drill/result/*")

    # A wrong answer: the box for the explanation has the focus, the verdict is
    # in the page's title and in the box's description.
    assert focused(page)["id"] == "why"
    assert page.title().startswith("没答对")
    described = page.locator("#why").get_attribute("aria-describedby").split()
    assert "verdict" in described
    keys.type("右上角那一格我把 k 的下标看错了。")
    keys.press("Tab")
    assert focused(page)["text"] == "保存我的解释"
    keys.press("Enter")
    page.wait_for_selector("#note-link")

    # Explained: the verdict heading has the focus; reading on from it gives
    # the right answer and the explanation, then the way on.
    assert focused(page)["id"] == "verdict"
    assert page.title().startswith("没答对")
    for _ in range(6):
        if focused(page)["id"] == "next":
            break
        keys.press("Tab")
    assert focused(page)["id"] == "next"
    keys.press("Enter")
    page.wait_for_url("**/drill")
    assert page.locator("article.item").count() == 1
    context.close()
    with capsys.disabled():
        print(f"\nkeyboard: a 4×4 item took {keys.pressed} key presses beyond typing")
    assert keys.pressed <= 25


def test_arrow_keys_move_between_cells_and_tab_leaves_the_matrix(server, browser):
    """Do ←→↑↓ and Home/End move between the cells of a row and a column (the
    caret first, within what was typed), and Tab still leave the matrix?"""
    context = browser.new_context(
        locale="zh-CN", viewport={"width": 1280, "height": 900}
    )
    page = context.new_page()
    page.goto(server + "practice/scores/3/8")
    assert "Home" in page.locator("#grid-keys").inner_text()
    keys = Keyboard(page)
    assert focused(page)["name"] == "cell-S-0-0"
    keys.press("ArrowRight")  # an empty cell: straight to the next one
    assert focused(page)["name"] == "cell-S-0-1"
    keys.type("1.5")
    keys.press("ArrowLeft")  # the caret moves inside "1.5" first
    assert focused(page)["name"] == "cell-S-0-1"
    keys.press("ArrowLeft")
    keys.press("ArrowLeft")
    keys.press("ArrowLeft")  # at the start: on to the cell before
    assert focused(page)["name"] == "cell-S-0-0"
    keys.press("ArrowDown")
    assert focused(page)["name"] == "cell-S-1-0"
    keys.press("End")
    assert focused(page)["name"] == "cell-S-1-3"
    keys.press("ArrowUp")
    assert focused(page)["name"] == "cell-S-0-3"
    keys.press("Home")
    assert focused(page)["name"] == "cell-S-0-0"
    keys.press("ArrowUp")  # the top row: nowhere to go
    assert focused(page)["name"] == "cell-S-0-0"
    page.focus("input[name='cell-S-3-3']")
    keys.press("Tab")
    assert not focused(page)["name"].startswith("cell-")
    assert page.locator("input[name='cell-S-0-1']").input_value() == "1.5"
    context.close()


def ax_cells(page) -> dict[str, dict]:
    """The text boxes in the accessibility tree: name, description, invalid."""
    cdp = page.context.new_cdp_session(page)
    nodes = cdp.send("Accessibility.getFullAXTree")["nodes"]
    cells = {}
    for node in nodes:
        if node.get("role", {}).get("value") != "textbox":
            continue
        props = {p["name"]: p["value"].get("value") for p in node.get("properties", [])}
        name = node.get("name", {}).get("value", "")
        cells[name] = {
            "description": node.get("description", {}).get("value", ""),
            "invalid": props.get("invalid", "false"),
        }
    return cells


@pytest.mark.parametrize(
    ("lang", "cell_name", "right", "wrong"),
    [
        ("zh-CN", "{label}：第 {row} 行第 {col} 列", "对", "错"),
        ("en", "{label}, row {row}, column {col}", "right", "wrong"),
    ],
)
def test_a_screen_reader_hears_each_graded_cells_place_and_verdict(
    lang, cell_name, right, wrong, server, browser
):
    """In the accessibility tree of a checked 4×4 matrix, is every cell named by
    its matrix, row and column, described by its verdict in words, and a wrong
    one invalid?"""
    problem = problems.generate("scores", 8, 3)
    context = browser.new_context(locale=lang, viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.goto(server + "practice/scores/3/8" + ("?lang=en" if lang == "en" else ""))
    answer = problem.answer_json("S")
    wrong_cells = {(0, 3), (2, 1)}
    for i, row in enumerate(answer):
        for j, cell in enumerate(row):
            shown = "7" if (i, j) in wrong_cells else typed(cell)
            page.fill(f"input[name='cell-S-{i}-{j}']", shown)
    page.click("#check-answer")
    page.wait_for_selector("#verdict")
    assert focused(page)["id"] == "verdict"  # the result is what is heard first
    label = problem.public_dict(lang)["ask"][0]["label"]
    tree = ax_cells(page)
    for i, row in enumerate(answer):
        for j in range(len(row)):
            name = cell_name.format(label=label, row=i + 1, col=j + 1)
            assert name in tree, (name, sorted(tree)[:5])
            is_wrong = (i, j) in wrong_cells
            assert tree[name]["description"] == (wrong if is_wrong else right)
            assert tree[name]["invalid"] == ("true" if is_wrong else "false")
    # The ✓/✗ glyphs are not read out as well.
    glyphs = page.locator("table.grid .mark").evaluate_all(
        "marks => marks.map(m => m.getAttribute('aria-hidden'))"
    )
    assert glyphs and set(glyphs) == {"true"}
    context.close()


def test_a_format_error_points_at_the_cell_at_fault(server, browser, server_instance):
    """After a typed entry that is not a number, does the focus land on that
    cell, marked invalid and described by the message, in practice and drill?"""
    database = server_instance / "quizsvc.sqlite3"
    context = browser.new_context(
        locale="zh-CN", viewport={"width": 1280, "height": 900}
    )
    page = context.new_page()
    page.goto(server + "practice/scores/3/8")
    for i, row in enumerate(problems.generate("scores", 8, 3).answer_json("S")):
        for j, cell in enumerate(row):
            page.fill(f"input[name='cell-S-{i}-{j}']", typed(cell))
    page.fill("input[name='cell-S-2-1']", "zwei")
    page.click("#check-answer")
    page.wait_for_selector("#error-S")
    assert "第 3 行第 2 列" in page.locator("#error-S").inner_text()
    assert focused(page)["name"] == "cell-S-2-1"
    cell = page.locator("input[name='cell-S-2-1']")
    assert cell.get_attribute("aria-invalid") == "true"
    assert "error-S" in cell.get_attribute("aria-describedby")
    assert page.locator("[aria-invalid=true]").count() == 1

    register(page, server, "cuowu")
    open_item(page, server, database, "cuowu", "l16-hand-generated-hard", (
        "scores", 8, 3,
    ))  # fmt: skip
    for i in range(4):
        for j in range(4):
            page.fill(f"input[name='cell-S-{i}-{j}']", "1")
    page.fill("input[name='cell-S-3-2']", "1/0x")
    page.click("#submit-answer")
    page.wait_for_selector("#answer-error")
    assert focused(page)["name"] == "cell-S-3-2"
    cell = page.locator("input[name='cell-S-3-2']")
    assert cell.get_attribute("aria-invalid") == "true"
    assert cell.get_attribute("aria-describedby") == "answer-error"
    assert page.locator("input[name='cell-S-3-2']").input_value() == "1/0x"
    context.close()


def test_explore_says_its_values_and_keeps_its_descriptions_current(server, browser):
    """After the sliders move by keyboard, do they speak "d = …" and "τ = …", do
    the charts' descriptions and tooltips give the numbers drawn, and is every
    label readable on its cell?"""
    context = browser.new_context(
        locale="zh-CN", viewport={"width": 320, "height": 900}
    )
    page = context.new_page()
    page.goto(server + "explore")
    assert page.locator("#explore-d").get_attribute("aria-valuetext") == "d = 64"
    page.focus("#explore-d")
    page.keyboard.press("End")
    assert page.locator("#explore-d").get_attribute("aria-valuetext") == "d = 512"
    page.focus("#explore-t")
    for _ in range(10):
        page.keyboard.press("ArrowLeft")
    assert page.locator("#explore-t").get_attribute("aria-valuetext") == "τ = 0.5"
    page.locator("#explore-scaled").press("Space")  # 1/√d off: sharp rows

    shown = page.locator("#row-chart text.value").all_text_contents()
    desc = page.locator("#row-chart desc").text_content()
    assert desc == "; ".join(f"k{j}: {value}" for j, value in enumerate(shown))
    labels = page.locator("#heatmap text.cell").all_text_contents()
    rows = page.locator("#heatmap desc").text_content().split("; ")
    described = [
        float(e.split("=")[1]) for row in rows for e in row.split(": ")[1].split(", ")
    ]
    assert [f"{x:.2f}" for x in described] == labels
    titles = page.locator("#heatmap rect.hm title").all_text_contents()
    assert [t.rsplit(": ", 1)[1] for t in titles] == labels
    fills = page.locator("#heatmap rect.hm").evaluate_all(
        "cells => cells.map(c => c.getAttribute('fill'))"
    )
    inks = page.locator("#heatmap text.cell").evaluate_all(
        "labels => labels.map(l => l.getAttribute('fill'))"
    )
    assert (
        min(contrast(rgb(f), rgb(i)) for f, i in zip(fills, inks, strict=True)) >= 4.5
    )
    overflow = page.evaluate(
        "document.documentElement.scrollWidth - document.documentElement.clientWidth"
    )
    assert overflow <= 1
    context.close()
