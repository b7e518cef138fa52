"""Class exports: which rows, which values, which dates, valid xAPI statements."""

from __future__ import annotations

import csv
import io
import re
import uuid
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

import openpyxl
import pytest
from sqlalchemy import select

from quizsvc.exports.kinds import check_class_export, class_export
from quizsvc.exports.options import (
    ExportOptions,
    check_kind,
    file_stem,
    parse_date_range,
)
from quizsvc.exports.reviews import count_rows, own_history
from quizsvc.models import Review, User
from quizsvc.services import InvalidInput
from quizsvc.services.classes import RosterError, import_roster, parse_roster
from quizsvc.services.drill import learning_streak
from quizsvc.services.grades import (
    RULES,
    GradeRule,
    grade_lesson,
    grade_shares,
    parse_grade_rule,
)
from quizsvc.services.progress import skill_progress
from tests.factories import (
    CLASS_ZONE,
    HOSTILE_NAME,
    NOW,
    TRICKY_ANSWERS,
    answer,
    build_class_history,
    export_bank,
    in_chinese,
    validate_statement,
)

BASE = "https://quiz.example/"


@pytest.fixture
def history(db_session, make_bank):
    return build_class_history(db_session, export_bank(make_bank))


def export(session, history, kind, **options):
    options.setdefault("base_url", BASE)
    options.setdefault("now", NOW)
    (table,) = class_export(session, history.classroom, kind, ExportOptions(**options))
    keys = [column.key for column in table.columns]
    return table, [dict(zip(keys, row, strict=True)) for row in table]


# --- reviews -------------------------------------------------------------------------


def test_reviews_hold_only_the_class_learners_in_learner_then_time_order(
    db_session, history
):
    """Does the teacher get every review of their learners and nobody else's?"""
    _table, rows = export(db_session, history, "reviews")
    assert [row["review_id"] for row in rows] == (
        history.reviews["ana"] + history.reviews["bo"]
    )
    assert {row["username"] for row in rows} == {"ana", "bo"}
    assert not {row["review_id"] for row in rows} & set(history.outsider_reviews)
    assert count_rows(db_session, history.classroom, ExportOptions()) == len(rows)


def test_review_rows_carry_what_happened(db_session, history):
    """Are the learner, the item, the times, the answer and the explanation there?"""
    _table, rows = export(db_session, history, "reviews")
    first, wrong = rows[0], rows[len(history.reviews["ana"]) - 1]
    assert first["student_number"] == "2026001"
    assert first["display_name"] == HOSTILE_NAME
    assert first["learner_id"] == history.learners["ana"].id
    assert (first["item_id"], first["item_type"], first["skills"], first["lesson"]) == (
        "q-choice", "choice", "scores", "lesson-16",
    )  # fmt: skip
    assert first["reviewed_at_utc"] == datetime(2026, 2, 18, 15, 0, tzinfo=UTC)
    local = first["reviewed_at_local"]
    assert local.utcoffset().total_seconds() == -5 * 3600 and local.hour == 10
    assert (first["rating"], first["correct"], first["score"]) == (3, True, 1.0)
    assert first["duration_ms"] == 4200 and first["answer_raw"] == "b"
    ordering = next(row for row in rows if row["item_type"] == "ordering")
    assert ordering["skills"] == "weights;scores"
    assert [row["answer_raw"] for row in rows[1:3]] == [
        TRICKY_ANSWERS[1],
        TRICKY_ANSWERS[0],
    ]
    assert wrong["correct"] is False and wrong["score"] == 0.0
    assert wrong["misconception"] == "no_scale"
    assert (wrong["problem_kind"], wrong["problem_seed"], wrong["problem_level"]) == (
        "weights", 42, 2,
    )  # fmt: skip
    assert wrong["permalink"] == f"{BASE}practice/weights/2/42"
    assert wrong["explanation"] == "=我忘了除以 √d"
    recall = next(row for row in rows if row["item_type"] == "recall")
    assert recall["score"] is None and recall["answer"] is None
    assert recall["answer_raw"] is None
    bo = [row for row in rows if row["username"] == "bo"]
    # No name given to the class: the account's display name shows.
    assert bo[0]["display_name"] == "Bo from the profile"


@pytest.mark.parametrize(
    "start, end, expected",
    [
        # 03:30 UTC on 1 March is 22:30 on 28 February in New York.
        ("2026-02-28", "2026-02-28", [0]),
        ("2026-03-01", "2026-03-01", [1]),
        ("2026-02-28", "2026-03-01", [0, 1]),
        ("2026-03-01", None, [1]),
        (None, "2026-02-28", [0]),
    ],
)
def test_date_range_is_read_in_the_class_time_zone(
    db_session, history, start, end, expected
):
    """Do from/to select whole days of the class's calendar, both ends included?"""
    dates = parse_date_range(start, end)
    _table, rows = export(db_session, history, "reviews", dates=dates)
    bo = [row["review_id"] for row in rows if row["username"] == "bo"]
    assert bo == [history.reviews["bo"][i] for i in expected]
    for row in rows:
        day = row["reviewed_at_utc"].astimezone(ZoneInfo(CLASS_ZONE)).date()
        assert (dates.start or date.min) <= day <= (dates.end or date.max)


@pytest.mark.parametrize(
    "start, end, message",
    [
        ("2026-13-01", None, "start date '2026-13-01' is not a date"),
        (None, "yesterday", "end date 'yesterday' is not a date"),
        ("2026-03-02", "2026-03-01", "start date is after the end date"),
    ],
)
def test_bad_date_ranges_are_refused(start, end, message):
    """Is a malformed or reversed range refused with a message naming it?"""
    with pytest.raises(InvalidInput, match=message):
        parse_date_range(start, end)


def test_kinds_and_formats_are_checked():
    """Are unknown kinds and formats a kind cannot take refused by name?"""
    assert check_kind("reviews", None) == "csv"
    assert check_kind("xapi", None) == "jsonl"
    assert check_kind("workbook", None) == "xlsx"
    with pytest.raises(InvalidInput, match="unknown export 'grades'"):
        check_kind("grades", None)
    with pytest.raises(InvalidInput, match="xapi exports as jsonl, not 'csv'"):
        check_kind("xapi", "csv")


def test_file_names_name_the_class_kind_and_dates(history):
    """Does the download's name say which class, export and days it holds?"""
    stem = file_stem(history.classroom, "reviews", parse_date_range("2026-03-01", ""))
    assert stem == "高二（3）班-reviews-2026-03-01_"


# --- in the reader's language -----------------------------------------------------


def rendered_rows(session, history, kind, file_format, language, **options):
    """The export as a reader opens it: CSV through csv, XLSX through openpyxl."""
    from quizsvc.exports import render

    options.setdefault("now", NOW)
    tables = class_export(session, history.classroom, kind, ExportOptions(**options))
    data = b"".join(render(tables, file_format, language))
    if file_format == "csv":
        text = data.decode("utf-8-sig")
        return list(csv.reader(io.StringIO(text, newline="")))
    return openpyxl.load_workbook(io.BytesIO(data))


def test_zh_exports_show_words_not_keys(db_session, history):
    """Does a Chinese CSV show item types, skills, lessons, right or wrong,
    misconceptions and problem kinds in Chinese, one header per concept?"""
    rows = rendered_rows(db_session, history, "reviews", "csv", "zh-CN")
    header = rows[0]
    assert len(set(header)) == len(header) and "题目类型" not in header
    by_name = [dict(zip(header, row, strict=True)) for row in rows[1:]]
    first, wrong = by_name[0], by_name[len(history.reviews["ana"]) - 1]
    assert (first["题型"], first["技能"], first["课程"], first["是否正确"]) == (
        "选择题", "scores(中文)", "lesson 16(中文)", "对",
    )  # fmt: skip
    ordering = next(row for row in by_name if row["题型"] == "排序题")
    assert ordering["技能"] == "weights(中文)；scores(中文)"
    assert (wrong["是否正确"], wrong["典型错误"], wrong["生成题种类"]) == (
        "错", "漏掉了缩放 1/√d", "权重 A",
    )  # fmt: skip
    assert wrong["生成题链接"] == "http://127.0.0.1:8000/practice/weights/2/42"
    assert {row["题型"] for row in by_name} == {
        "选择题", "数值题", "填空题", "记忆", "排序题", "随机生成的计算题",
    }  # fmt: skip


def test_en_exports_show_english_words_and_json_keeps_keys(db_session, history):
    """Does an English CSV show English words, and JSON lines the keys?"""
    rows = rendered_rows(db_session, history, "reviews", "csv", "en")
    by_name = [dict(zip(rows[0], row, strict=True)) for row in rows[1:]]
    wrong = by_name[len(history.reviews["ana"]) - 1]
    assert (wrong["Item type"], wrong["Skills"], wrong["Lesson"]) == (
        "generated problem", "weights", "lesson 16",
    )  # fmt: skip
    assert (wrong["Correct"], by_name[0]["Correct"]) == ("false", "true")
    assert wrong["Misconception"] == "Scale 1/√d left out"
    assert wrong["Generated problem: kind"] == "Weights A"
    _table, typed = export(db_session, history, "reviews")
    json_row = typed[len(history.reviews["ana"]) - 1]
    assert (json_row["item_type"], json_row["misconception"]) == (
        "generated",
        "no_scale",
    )


def test_xlsx_shows_words_and_ratios_as_percentages(db_session, history):
    """Does the XLSX show right or wrong in words (zh) or as a boolean (en), and
    every ratio as a number in a percent format?"""
    book = rendered_rows(db_session, history, "reviews", "xlsx", "zh-CN")
    sheet = book["答题记录"]
    header = [cell.value for cell in sheet[1]]
    score = sheet.cell(2, header.index("得分率") + 1)
    assert (score.value, score.number_format) == (1, "0.0%")
    assert sheet.cell(2, header.index("是否正确") + 1).value == "对"
    assert sheet.cell(2, header.index("题型") + 1).value == "选择题"
    english = rendered_rows(db_session, history, "reviews", "xlsx", "en")["Reviews"]
    header = [cell.value for cell in english[1]]
    assert english.cell(2, header.index("Correct") + 1).value is True
    summary = rendered_rows(db_session, history, "summary", "xlsx", "zh-CN")
    sheet = summary["班级概况"]
    header = [cell.value for cell in sheet[1]]
    accuracy = sheet.cell(2, header.index("30 天正确率：weights(中文)") + 1)
    assert (accuracy.value, accuracy.number_format) == (0.8, "0.0%")
    recall = sheet.cell(2, header.index("7 天后记忆：scores(中文)") + 1)
    assert recall.number_format == "0.0%" and 0 < recall.value <= 1


def test_your_own_export_says_your_time_zone(db_session, history):
    """Does a learner's own export name their time zone, not the class's, and
    show the skills of their self-ratings by name?"""
    from quizsvc.exports import iter_csv

    user = db_session.get(User, history.learners["ana"].id)
    reviews, assessments = own_history(db_session, user, ExportOptions(base_url=BASE))
    header = next(csv.reader(io.StringIO("".join(iter_csv(reviews, "zh-CN"))[1:])))
    assert "作答时间（你的时区）" in header and "作答时间（班级时区）" not in header
    rows = list(csv.reader(io.StringIO("".join(iter_csv(assessments, "zh-CN"))[1:])))
    assert [row[:2] for row in rows[1:]] == [
        ["scores(中文)", "1"],
        ["scores(中文)", "3"],
    ]


# --- summary -------------------------------------------------------------------------


def test_summary_has_one_row_per_learner_with_their_figures(db_session, history):
    """Do recall, accuracy, self-ratings and streaks match the learner's own pages?"""
    table, rows = export(db_session, history, "summary")
    assert [row["username"] for row in rows] == ["ana", "bo", "cy"]
    ana, bo, cy = rows
    assert (ana["reviews"], bo["reviews"], cy["reviews"]) == (7, 2, 0)
    assert ana["last_active_utc"] == db_session.get(
        Review, history.reviews["ana"][-1]
    ).reviewed_at.astimezone(UTC)
    assert cy["last_active_utc"] is None and cy["recall_7d_scores"] is None
    for name, row in zip(("ana", "bo", "cy"), rows, strict=True):
        user = history.learners[name]
        assert row["streak"] == learning_streak(db_session, user, NOW)
        for progress in skill_progress(db_session, user, NOW):
            # The dashboard's and the learner's pages' recall: 7 days ahead.
            expected = progress.recall_at_horizon
            got = row[f"recall_7d_{progress.skill_id}"]
            assert got == (
                None if expected is None else pytest.approx(expected, abs=1e-4)
            )
            assert row[f"self_rating_{progress.skill_id}"] == progress.self_assessment
    assert ana["self_rating_scores"] == 3
    # 30 days to now: ana's scores answers (choice, numeric, ordering) all right;
    # weights: cloze, recall, ordering, generated right, one generated wrong.
    assert ana["accuracy_30d_scores"] == 1.0
    assert ana["accuracy_30d_weights"] == 0.8
    assert bo["accuracy_30d_scores"] == 0.5
    assert table.columns[8].heading("zh-CN") == "7 天后记忆：scores(中文)"
    assert table.columns[8].heading("en") == "Recall in 7 days: scores"


def test_summary_counts_reviews_in_the_date_range(db_session, history):
    """Does a date range narrow the review counts to those days?"""
    _table, rows = export(
        db_session, history, "summary", dates=parse_date_range("2026-03-01", None)
    )
    assert [row["reviews"] for row in rows] == [1, 1, 0]


# --- Canvas --------------------------------------------------------------------------


def test_canvas_has_its_columns_points_row_and_one_row_per_learner(db_session, history):
    """Is the file shaped as Canvas's gradebook import expects?"""
    table, rows = export(db_session, history, "canvas", points=20)
    headers = [column.heading("en") for column in table.columns]
    assert headers[:5] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
    assert headers[5] == "quizsvc lesson 16 (accuracy)"
    zh = [column.heading("zh-CN") for column in table.columns]
    # Canvas matches its own columns by their English names; the assignment
    # is titled in the export's language.
    assert zh == [*headers[:5], "quizsvc lesson 16(中文)（正确率）"]
    points = list(rows[0].values())
    assert points == ["Points Possible", None, None, None, None, 20]
    assert [row["sis_user_id"] for row in rows[1:]] == ["2026001", "2026002", "2026003"]
    assert [row["sis_login_id"] for row in rows[1:]] == ["ana", "bo", "cy"]
    assert [row["section"] for row in rows[1:]] == ["高二（3）班"] * 3
    assert rows[1]["student"] == HOSTILE_NAME


def test_canvas_identity_columns_are_written_as_canvas_stores_them(db_session, history):
    """Are Student, SIS User ID and SIS Login ID written exactly, without the
    apostrophe that guards other text (Canvas compares them literally)?"""
    from quizsvc.exports import iter_csv
    from quizsvc.models import Membership

    member = db_session.scalar(
        select(Membership).where(Membership.user_id == history.learners["bo"].id)
    )
    member.student_number, member.display_name = "@SUM(A1)", "+张三"
    db_session.flush()
    (table,) = class_export(
        db_session, history.classroom, "canvas", ExportOptions(now=NOW)
    )
    rows = list(csv.reader(io.StringIO("".join(iter_csv(table, "en"))[1:])))
    assert rows[2][:4] == [HOSTILE_NAME, "", "2026001", "ana"]
    assert ["+张三", "", "@SUM(A1)", "bo"] in [row[:4] for row in rows]


def test_canvas_recall_now_is_mean_recall_over_the_lesson_skills(db_session, history):
    """Is recall_now the mean recall now of the lesson's skills times points?"""
    _table, rows = export(
        db_session, history, "canvas", points=50, rule=GradeRule("recall_now")
    )
    for name, row in zip(("ana", "bo", "cy"), rows[1:], strict=True):
        recall = [
            p.mean_retrievability or 0.0
            for p in skill_progress(db_session, history.learners[name], NOW)
        ]
        assert row["score"] == pytest.approx(sum(recall) / len(recall) * 50, abs=0.01)
    assert rows[3]["score"] == 0


@pytest.mark.parametrize("day", [None, "2026-04-01"])
def test_canvas_retention_is_mean_recall_at_the_start_of_the_day(
    db_session, history, day
):
    """Is retention the lesson's mean recall at 00:00 (class time) of the day
    asked, by default a week after the export, and less than recall now?"""
    rule = parse_grade_rule("retention", day)
    table, rows = export(db_session, history, "canvas", rule=rule)
    expected_day = date.fromisoformat(day) if day else date(2026, 3, 17)
    assert table.columns[5].heading("en") == (
        f"quizsvc lesson 16 (retention on {expected_day})"
    )
    moment = datetime.combine(expected_day, time(0), tzinfo=ZoneInfo(CLASS_ZONE))
    _table, now_rows = export(
        db_session, history, "canvas", rule=GradeRule("recall_now")
    )
    for name, row, now_row in zip(("ana", "bo"), rows[1:], now_rows[1:], strict=False):
        recall = [
            p.mean_retrievability or 0.0
            for p in skill_progress(db_session, history.learners[name], moment)
        ]
        assert row["score"] == pytest.approx(sum(recall) / len(recall) * 100, abs=0.01)
        assert 0 < row["score"] < now_row["score"]


def test_canvas_accuracy_counts_right_answers_in_the_range(db_session, history):
    """Is the default score the share of right answers in the range times points?"""
    _table, rows = export(db_session, history, "canvas", assignment="Quiz 1")
    assert rows[0]["score"] == 100
    assert [row["score"] for row in rows[1:]] == [round(6 / 7 * 100, 2), 50.0, 0.0]
    table, rows = export(
        db_session, history, "canvas", rule=GradeRule("accuracy"),
        dates=parse_date_range("2026-03-01", "2026-03-01"),
    )  # fmt: skip
    assert [row["score"] for row in rows[1:]] == [0.0, 100.0, 0.0]


def test_the_grade_rule_is_one_function_for_every_learner(db_session, history):
    """Does grade_shares give every learner of the class a share from 0 to 1?"""
    classroom = history.classroom
    learners = {user.id for user in history.learners.values()}
    for name in RULES:
        shares = grade_shares(
            db_session, classroom, GradeRule(name), grade_lesson(db_session, None),
            now=NOW,
        )  # fmt: skip
        assert set(shares) == learners
        assert all(0 <= share <= 1 for share in shares.values())


def test_canvas_options_are_checked(db_session, history):
    """Are an unknown rule, lesson, a bad number of points or date refused?"""
    with pytest.raises(InvalidInput, match="unknown score rule 'vibes'"):
        GradeRule("vibes")
    with pytest.raises(InvalidInput, match="now called recall_now"):
        parse_grade_rule("mastery", None)
    with pytest.raises(InvalidInput, match="is not a date"):
        parse_grade_rule("retention", "2026-02-30")
    with pytest.raises(InvalidInput, match="goes with rule=retention"):
        parse_grade_rule("accuracy", "2026-04-01")
    with pytest.raises(InvalidInput, match="points"):
        ExportOptions(points=0)
    with pytest.raises(InvalidInput, match="unknown lesson 'lesson-99'"):
        export(db_session, history, "canvas", lesson_id="lesson-99")
    with pytest.raises(InvalidInput, match="xlsx"):
        check_kind("canvas", "xlsx")
    options = ExportOptions(rule=parse_grade_rule("retention", "2026-03-09"), now=NOW)
    with pytest.raises(InvalidInput, match=r"from today \(2026-03-10\)"):
        check_class_export(db_session, history.classroom, "canvas", options)


@pytest.mark.parametrize(
    "title, reason",
    [
        ("Final exam", "'final'"),
        ("the FINAL quiz", "'final'"),
        ("Semifinals", "'final'"),
        ("Final Grade check", "'final'"),
        ("current  SCORE", "'current score'"),
        ("Unposted Current Points", "'current points'"),
        ("Override Status", "'override status'"),
        ("Quiz 1 (2024)", "an existing assignment's id"),
        ("Quiz (7)", "an existing assignment's id"),
        ("SIS Login ID", "student information"),
        ("Student", "student information"),
        ("   ", "empty"),
        ("two\nlines", "one line"),
        ("x" * 256, "one line of at most 255"),
    ],
)
def test_assignment_titles_canvas_misreads_are_refused(title, reason):
    """Is a title Canvas would drop or bind to another assignment refused, saying
    why?"""
    with pytest.raises(InvalidInput, match=re.escape(reason)):
        ExportOptions(assignment=title)


@pytest.mark.parametrize(
    "title", ["Quiz 1", "Quiz (A)", "Quiz 2024", "注意力（2024）", "Week 3 (draft)"]
)
def test_assignment_titles_canvas_reads_are_kept(db_session, history, title):
    """Does a title Canvas reads as a new assignment reach the column as typed?"""
    table, _rows = export(db_session, history, "canvas", assignment=f" {title} ")
    assert table.columns[5].heading("en") == table.columns[5].heading("zh-CN") == title


def test_a_lesson_titled_final_gets_a_title_canvas_keeps(db_session, history):
    """When the lesson's own title would trip Canvas, does the default title use
    the lesson's id instead?"""
    from quizsvc.models import Lesson

    lesson = db_session.get(Lesson, "lesson-16")
    lesson.title = {"en": "Final review", "zh-CN": "期末复习 final"}
    db_session.flush()
    table, _rows = export(db_session, history, "canvas")
    assert table.columns[5].heading("en") == "quizsvc lesson-16 (accuracy)"
    assert table.columns[5].heading("zh-CN") == "quizsvc lesson-16（正确率）"


def test_a_roster_student_number_that_starts_like_a_formula_is_refused():
    """Since Canvas's identity columns go unguarded, is a roster number starting
    with = + - @ refused at import, by line?"""
    with pytest.raises(RosterError) as caught:
        parse_roster("学号,姓名\n=1+1,甲\n+86,乙\n-A17,丙\n@x,丁\n2026,戊\n")
    lines = [problem.render() for problem in caught.value.problems]
    assert [line.split(":")[0] for line in lines] == [
        "line 2",
        "line 3",
        "line 4",
        "line 5",
    ]
    assert "spreadsheets run as a formula" in lines[0]
    assert in_chinese(caught.value.problems[0]).startswith("第 2 行：学号 =1+1")


# --- gradebook ------------------------------------------------------------------


def test_gradebook_has_a_row_per_roster_entry_or_learner(db_session, history):
    """Is the plain gradebook 学号, 姓名, 成绩 with the roster's names, 0 for who
    has not joined, and learners not on the roster under their own names?"""
    import_roster(
        db_session, history.classroom, "学号,姓名\n2026001,安娜\n2026004,丁一\n"
    )
    table, rows = export(db_session, history, "gradebook", points=10)
    assert [c.heading("zh-CN") for c in table.columns] == ["学号", "姓名", "成绩"]
    assert [c.heading("en") for c in table.columns] == [
        "Student number",
        "Name",
        "Score",
    ]
    assert [tuple(row.values()) for row in rows] == [
        ("2026001", "安娜", round(6 / 7 * 10, 2)),
        ("2026002", "Bo from the profile", 5.0),
        ("2026003", "cy", 0.0),
        ("2026004", "丁一", 0.0),
    ]


def test_gradebook_scores_by_the_same_rule_as_canvas(db_session, history):
    """Do the gradebook and Canvas give each learner the same score by any rule?"""
    for rule in (GradeRule("recall_now"), parse_grade_rule("retention", None)):
        _table, grades = export(db_session, history, "gradebook", rule=rule, points=7)
        _table, canvas = export(db_session, history, "canvas", rule=rule, points=7)
        assert [row["score"] for row in grades] == [row["score"] for row in canvas[1:]]
        assert any(row["score"] > 0 for row in grades)


def test_gradebook_files_read_back_in_both_formats(db_session, history):
    """Does the gradebook open as CSV (UTF-8 with BOM, guarded) and as XLSX?"""
    from quizsvc.exports import render
    from quizsvc.models import Membership

    member = db_session.scalar(
        select(Membership).where(Membership.user_id == history.learners["cy"].id)
    )
    member.student_number = None
    db_session.flush()
    options = ExportOptions(now=NOW)
    tables = class_export(db_session, history.classroom, "gradebook", options)
    data = b"".join(render(tables, "csv", "zh-CN"))
    rows = list(csv.reader(io.StringIO(data.decode("utf-8-sig"), newline="")))
    assert rows[0] == ["学号", "姓名", "成绩"]
    # The name stays guarded here: this sheet is opened in a spreadsheet first.
    assert rows[1] == ["2026001", "'" + HOSTILE_NAME, str(round(6 / 7 * 100, 2))]
    assert rows[-1] == ["", "cy", "0.0"]
    tables = class_export(db_session, history.classroom, "gradebook", options)
    book = openpyxl.load_workbook(io.BytesIO(b"".join(render(tables, "xlsx", "en"))))
    sheet = book["Grades"]
    assert list(sheet.iter_rows(values_only=True)) == [
        ("Student number", "Name", "Score"),
        ("2026001", HOSTILE_NAME, round(6 / 7 * 100, 2)),
        ("2026002", "Bo from the profile", 50),
        (None, "cy", 0),
    ]


# --- xAPI ----------------------------------------------------------------------------


def xapi_statements(session, history):
    _table, rows = export(session, history, "xapi")
    return [row["statement"] for row in rows]


def test_every_statement_is_valid_xapi(db_session, history):
    """Does every review become a statement an LRS accepts?"""
    statements = xapi_statements(db_session, history)
    assert len(statements) == len(history.reviews["ana"]) + len(history.reviews["bo"])
    for statement in statements:
        validate_statement(statement)


def test_statements_map_item_types_to_interaction_types(db_session, history):
    """Does each of the six item types get its cmi.interaction type?"""
    by_item = {
        s["object"]["id"].rsplit("/", 1)[1]: s["object"]["definition"]
        for s in xapi_statements(db_session, history)
    }
    assert {item: d["interactionType"] for item, d in by_item.items()} == {
        "q-choice": "choice",
        "q-numeric": "numeric",
        "q-cloze": "fill-in",
        "q-recall": "other",
        "q-ordering": "sequencing",
        "q-generated": "other",
    }
    assert {d["type"] for d in by_item.values()} == {
        "http://adlnet.gov/expapi/activities/cmi.interaction"
    }


def test_statement_content(db_session, history):
    """Are the actor, verb, result and context those of the review?"""
    statements = xapi_statements(db_session, history)
    first = statements[0]
    assert first["actor"]["account"] == {
        "homePage": BASE,
        "name": str(history.learners["ana"].id),
    }
    assert first["verb"]["id"] == "http://adlnet.gov/expapi/verbs/answered"
    assert first["object"]["id"] == f"{BASE}items/q-choice"
    assert first["result"] == {
        "success": True, "completion": True,
        "score": {"scaled": 1.0, "raw": 1.0, "min": 0.0, "max": 1.0},
        "response": "b", "duration": "PT4.2S",
    }  # fmt: skip
    parent = first["context"]["contextActivities"]["parent"]
    assert [activity["id"] for activity in parent] == [f"{BASE}lessons/lesson-16"]
    assert first["timestamp"] == "2026-02-18T15:00:00.000Z"
    ordering = next(s for s in statements if s["object"]["id"].endswith("q-ordering"))
    assert ordering["result"]["response"] == "dot[,]scale-mask"
    wrong = statements[len(history.reviews["ana"]) - 1]
    assert wrong["result"]["success"] is False
    assert wrong["result"]["duration"] == "PT1M1.5S"
    extensions = wrong["context"]["extensions"]
    assert extensions[f"{BASE}xapi/misconception"] == "no_scale"
    assert extensions[f"{BASE}xapi/problem"] == f"{BASE}practice/weights/2/42"
    recall = next(s for s in statements if s["object"]["id"].endswith("q-recall"))
    assert "score" not in recall["result"]


def test_numeric_responses_are_numbers(db_session, history):
    """Is a numeric item's response the number the learner's answer reads as
    (none when it reads as no number), with the typed text beside it?"""
    bo = history.learners["bo"]
    typed = ["1/√2", "=1+1", "abc", "６４", "-0.5", "1e-5"]
    for n, text in enumerate(typed):
        answer(db_session, bo, "q-numeric", NOW - timedelta(hours=n), answer_text=text)
    db_session.commit()
    statements = xapi_statements(db_session, history)
    numeric = {
        s["context"].get("extensions", {}).get(f"{BASE}xapi/typed-response")
        or s["result"].get("response"): s
        for s in statements
        if s["object"]["id"].endswith("q-numeric")
    }
    responses = {text: numeric[text]["result"].get("response") for text in typed}
    assert responses == {
        "1/√2": "0.7071067811865475", "=1+1": "2", "abc": None, "６４": "64",
        "-0.5": "-0.5", "1e-5": "0.00001",
    }  # fmt: skip
    assert "xapi/typed-response" not in str(numeric["-0.5"]["context"])
    for statement in statements:
        validate_statement(statement)


def test_statement_ids_do_not_change_between_exports(db_session, history):
    """Does exporting twice give the same ids, one per review, as UUID 5?"""
    first = [s["id"] for s in xapi_statements(db_session, history)]
    again = [s["id"] for s in xapi_statements(db_session, history)]
    assert first == again
    assert len(set(first)) == len(first)
    assert {uuid.UUID(i).version for i in first} == {5}


# --- the learner's own history ---------------------------------------------------


def test_own_history_holds_only_the_learner(db_session, history):
    """Does a learner's export hold exactly their own answers and self-ratings?"""
    user = db_session.get(User, history.learners["ana"].id)
    reviews, assessments = own_history(db_session, user, ExportOptions(base_url=BASE))
    rows = list(reviews)
    assert [row[0] for row in rows] == history.reviews["ana"]
    assert {row[4] for row in rows} == {"ana"}
    assert [(row[0], row[1]) for row in assessments] == [("scores", 1), ("scores", 3)]


def test_each_workbook_sheet_states_its_size_and_one_is_selected(db_session, history):
    """Does every sheet of the class workbook declare the rows it holds, with
    only the first sheet selected?"""
    from quizsvc.exports import write_workbook

    tables = class_export(
        db_session, history.classroom, "workbook", ExportOptions(now=NOW)
    )
    buffer = io.BytesIO()
    write_workbook(tables, buffer, "zh-CN")
    read_only = openpyxl.load_workbook(buffer, read_only=True)
    for sheet in read_only:
        assert sheet.max_row == len(list(sheet.rows)), sheet.title
    assert read_only["班级概况"].max_row == 1 + 3
    whole = openpyxl.load_workbook(buffer)
    assert whole.sheetnames == ["答题记录", "班级概况", "成绩"]
    assert [bool(sheet.sheet_view.tabSelected) for sheet in whole] == [
        True,
        False,
        False,
    ]
