"""Classes: creating, joining with a code, leaving, co-teachers, rosters, access."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy import func, select

from quizsvc.models import Classroom, Membership, RosterEntry
from quizsvc.services import Conflict, InvalidInput, NotFound
from quizsvc.services.classes import (
    JOIN_CODE_ALPHABET,
    JOIN_CODE_LENGTH,
    MAX_ROSTER_ROWS,
    RosterError,
    add_co_teacher,
    class_for_teacher,
    class_learners,
    classes_of,
    create_class,
    import_roster,
    join_class,
    leave_class,
    normalize_join_code,
    parse_roster,
    remove_learner,
    remove_teacher,
    rotate_join_code,
    set_joining_open,
)
from quizsvc.services.users import create_user
from tests.factories import in_chinese


@pytest.fixture
def people(db_session):
    """A teacher, a second teacher, an admin and three learners."""
    names = {
        "teacher": "teacher",
        "other_teacher": "teacher",
        "admin": "admin",
        "ana": "learner",
        "bo": "learner",
        "cy": "learner",
    }
    users = {
        name: create_user(db_session, name, role=role) for name, role in names.items()
    }
    db_session.commit()
    return users


@pytest.fixture
def classroom(db_session, people):
    room = create_class(db_session, people["teacher"], "高二（3）班", term="2026 秋")
    db_session.commit()
    return room


def count(session, model) -> int:
    return session.scalar(select(func.count()).select_from(model))


def test_a_new_class_has_a_code_from_the_alphabet_and_its_creator_teaches_it(
    db_session, people, classroom
):
    """Is the creator a teacher of the class, with an unambiguous 8-letter code?"""
    assert len(classroom.join_code) == JOIN_CODE_LENGTH
    assert set(classroom.join_code) <= set(JOIN_CODE_ALPHABET)
    assert classroom.timezone == "Asia/Shanghai"
    assert class_for_teacher(db_session, people["teacher"], classroom.id) is classroom
    assert classes_of(db_session, people["teacher"])[0].role == "teacher"


def test_the_alphabet_has_no_characters_that_are_easily_confused():
    assert not set("01ILOU") & set(JOIN_CODE_ALPHABET)
    assert len(set(JOIN_CODE_ALPHABET)) == len(JOIN_CODE_ALPHABET) == 30


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"name": "  "}, "needs a name"),
        ({"name": "x" * 201}, "at most 200"),
        ({"name": "A", "term": "t" * 101}, "at most 100"),
        ({"name": "A", "timezone": "Mars/Olympus"}, "Unknown time zone"),
        ({"name": 5}, "must be text"),
    ],
)
def test_bad_class_fields_are_refused_and_nothing_is_written(
    db_session, people, fields, message
):
    with pytest.raises(InvalidInput, match=message):
        create_class(db_session, people["teacher"], **fields)
    db_session.rollback()
    assert count(db_session, Classroom) == 0


def test_learners_cannot_create_classes(db_session, people):
    with pytest.raises(InvalidInput, match="Only teacher accounts"):
        create_class(db_session, people["ana"], "mine")


def test_access_is_for_the_class_teachers_and_admins_only(
    db_session, people, classroom
):
    """Who gets the class from class_for_teacher, and who gets None?"""
    join_class(db_session, people["ana"], classroom.join_code)
    add_co_teacher(db_session, classroom, "other_teacher")
    db_session.commit()
    assert class_for_teacher(db_session, people["admin"], classroom.id) is classroom
    assert class_for_teacher(db_session, people["other_teacher"], classroom.id)
    assert class_for_teacher(db_session, people["ana"], classroom.id) is None
    assert class_for_teacher(db_session, people["bo"], classroom.id) is None
    assert class_for_teacher(db_session, people["teacher"], classroom.id + 1) is None


def test_joining_with_a_typed_code_adds_a_learner_with_number_and_name(
    db_session, people, classroom
):
    typed = " " + classroom.join_code.lower()[:4] + "-" + classroom.join_code[4:]
    membership = join_class(
        db_session,
        people["ana"],
        typed,
        student_number=" 2026001 ",
        display_name="安娜",
    )
    assert (membership.student_number, membership.display_name) == ("2026001", "安娜")
    assert membership.role == "learner"


@pytest.mark.parametrize("code", ["", "ZZZZZZZZ", None, 7])
def test_a_wrong_code_is_refused_and_nothing_is_written(
    db_session, people, classroom, code
):
    with pytest.raises((InvalidInput, NotFound)):
        join_class(db_session, people["ana"], code)
    db_session.rollback()
    assert count(db_session, Membership) == 1


def test_a_closed_class_takes_no_new_learners_but_keeps_its_members(
    db_session, people, classroom
):
    join_class(db_session, people["ana"], classroom.join_code)
    set_joining_open(db_session, classroom, False)
    db_session.commit()
    with pytest.raises(Conflict, match="not taking new learners"):
        join_class(db_session, people["bo"], classroom.join_code)
    db_session.rollback()
    assert [m.user.username for m in class_learners(db_session, classroom)] == ["ana"]


def test_a_rotated_code_replaces_the_old_one_at_once(db_session, people, classroom):
    old = classroom.join_code
    new = rotate_join_code(db_session, classroom)
    assert new != old and len(new) == JOIN_CODE_LENGTH
    with pytest.raises(NotFound):
        join_class(db_session, people["ana"], old)
    join_class(db_session, people["ana"], new)


def test_joining_twice_or_as_the_teacher_is_a_conflict(db_session, people, classroom):
    join_class(db_session, people["ana"], classroom.join_code)
    with pytest.raises(Conflict, match="already in this class"):
        join_class(db_session, people["ana"], classroom.join_code)
    with pytest.raises(Conflict, match="teach this class"):
        join_class(db_session, people["teacher"], classroom.join_code)


def test_a_student_number_is_claimed_once_per_class(db_session, people, classroom):
    join_class(db_session, people["ana"], classroom.join_code, student_number="7")
    with pytest.raises(Conflict, match="already used"):
        join_class(db_session, people["bo"], classroom.join_code, student_number="7")


def test_over_long_student_numbers_and_names_are_refused(db_session, people, classroom):
    code = classroom.join_code
    with pytest.raises(InvalidInput, match="at most 64"):
        join_class(db_session, people["ana"], code, student_number="9" * 65)
    with pytest.raises(InvalidInput, match="at most 128"):
        join_class(db_session, people["ana"], code, display_name="名" * 129)


def test_learners_are_listed_by_student_number_then_name(db_session, people, classroom):
    join_class(db_session, people["cy"], classroom.join_code)
    join_class(db_session, people["bo"], classroom.join_code, student_number="002")
    join_class(db_session, people["ana"], classroom.join_code, student_number="001")
    names = [m.user.username for m in class_learners(db_session, classroom)]
    assert names == ["ana", "bo", "cy"]


def test_leaving_and_being_removed_end_membership(db_session, people, classroom):
    join_class(db_session, people["ana"], classroom.join_code)
    join_class(db_session, people["bo"], classroom.join_code)
    leave_class(db_session, people["ana"], classroom.id)
    remove_learner(db_session, classroom, people["bo"].id)
    assert class_learners(db_session, classroom) == []
    with pytest.raises(NotFound):
        leave_class(db_session, people["ana"], classroom.id)
    with pytest.raises(NotFound):
        remove_learner(db_session, classroom, people["teacher"].id)


def test_co_teachers_must_be_teacher_accounts_and_the_last_teacher_stays(
    db_session, people, classroom
):
    with pytest.raises(InvalidInput, match="not a teacher account"):
        add_co_teacher(db_session, classroom, "ana")
    with pytest.raises(InvalidInput, match="no account"):
        add_co_teacher(db_session, classroom, "nobody")
    add_co_teacher(db_session, classroom, "other_teacher")
    with pytest.raises(Conflict, match="already teaches"):
        add_co_teacher(db_session, classroom, "other_teacher")
    remove_teacher(db_session, classroom, people["teacher"].id)
    with pytest.raises(Conflict, match="at least one teacher"):
        remove_teacher(db_session, classroom, people["other_teacher"].id)


def test_an_admin_lists_every_class(db_session, people, classroom):
    listed = classes_of(db_session, people["admin"])
    assert [(c.classroom.id, c.role) for c in listed] == [(classroom.id, "admin")]
    assert classes_of(db_session, people["other_teacher"]) == []


# --- rosters ---------------------------------------------------------------------


def test_a_roster_with_bom_and_header_fills_names_when_learners_join(
    db_session, people, classroom
):
    join_class(db_session, people["cy"], classroom.join_code, student_number="003")
    data = "\ufeff学号,姓名\r\n001,张三\r\n002,李四\r\n003,王五\r\n".encode()
    result = import_roster(db_session, classroom, data)
    assert (result.entries, result.names_filled) == (3, 1)
    code = classroom.join_code
    joined = join_class(db_session, people["ana"], code, student_number="001")
    named = join_class(
        db_session, people["bo"], classroom.join_code, student_number="002",
        display_name="小李",
    )  # fmt: skip
    assert (joined.display_name, named.display_name) == ("张三", "小李")


def test_importing_a_roster_replaces_the_previous_one(db_session, people, classroom):
    import_roster(db_session, classroom, "1,甲\n2,乙\n")
    import_roster(db_session, classroom, "3,丙\n")
    assert count(db_session, RosterEntry) == 1


def test_a_malformed_roster_names_each_bad_line_and_writes_nothing(
    db_session, people, classroom
):
    import_roster(db_session, classroom, "1,甲\n")
    db_session.commit()
    data = "学号,姓名\n001,张三\n002\n,李四\n001,王五\n004,赵六,多余\n".encode()
    with pytest.raises(RosterError) as caught:
        import_roster(db_session, classroom, data)
    lines = [str(problem) for problem in caught.value.problems]
    assert [line.split(":")[0] for line in lines] == [
        "line 3",
        "line 4",
        "line 5",
        "line 6",
    ]
    assert "repeats line 2" in lines[2]
    assert in_chinese(caught.value.problems[0]).startswith("第 3 行：")
    db_session.rollback()
    assert count(db_session, RosterEntry) == 1


def test_a_ten_thousand_row_roster_is_refused_with_a_clear_message():
    rows = "".join(f"{n:06d},学生{n}\n" for n in range(10_000))
    with pytest.raises(RosterError, match=f"10,000 rows; at most {MAX_ROSTER_ROWS:,}"):
        parse_roster(rows.encode())


def test_a_roster_saved_in_gbk_is_read():
    """Excel and WPS on Chinese Windows save CSV in GBK: it is read, not refused."""
    assert parse_roster("001,张三\n".encode("gbk")) == [("001", "张三")]


@given(
    st.lists(
        st.tuples(
            st.text("0123456789", min_size=1, max_size=12),
            st.text(st.characters(categories=("L",)), min_size=1, max_size=20),
        ),
        min_size=1,
        max_size=30,
        unique_by=lambda pair: pair[0],
    ),
    st.booleans(),
)
def test_any_written_roster_reads_back_as_written(pairs, bom):
    """Does a roster written with csv (with or without BOM) parse to its pairs?"""
    import csv
    import io

    buffer = io.StringIO()
    csv.writer(buffer).writerows(pairs)
    data = ("\ufeff" if bom else "") + buffer.getvalue()
    assert parse_roster(data.encode()) == [(n, name.strip()) for n, name in pairs]


@given(st.text(JOIN_CODE_ALPHABET.lower() + " -", max_size=20))
def test_normalized_codes_are_upper_case_without_separators(typed):
    code = normalize_join_code(typed)
    assert set(code) <= set(JOIN_CODE_ALPHABET)
