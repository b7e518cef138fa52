"""Rosters from real files: the encodings and separators spreadsheets save, over
the page and the API, and who on the roster has joined."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from quizsvc.db import get_session
from quizsvc.models import RosterEntry
from quizsvc.services.accounts import hash_password
from quizsvc.services.classes import create_class, join_class
from quizsvc.services.rosters import RosterError, read_roster
from quizsvc.services.users import create_user
from tests.factories import (
    PASSWORD,
    csrf_token,
    graded_item,
    in_chinese,
    record,
    sign_in,
    sync_real_bank,
)

ROSTER = "学号,姓名\r\n2026001,李小明\r\n2026002,王芳\r\n2026003,张伟\r\n"

names = st.text(
    st.sampled_from("李王张刘陈杨黄赵吴周小明芳伟华丽军Ann Bo-é"),
    min_size=1,
    max_size=8,
).filter(lambda name: name.strip() and "," not in name)


@given(
    st.lists(names, min_size=1, max_size=20),
    st.sampled_from(["utf-8", "utf-8-sig", "utf-16", "gb18030", "gbk"]),
    st.sampled_from([",", "\t"]),
    st.sampled_from(["\n", "\r\n"]),
)
def test_any_saved_roster_reads_back(people, encoding, separator, newline):
    """Does a roster saved in any accepted encoding and separator read back as
    written, and say how it was read?"""
    lines = ["学号" + separator + "姓名"] + [
        f"{2026000 + n}{separator}{name}" for n, name in enumerate(people)
    ]
    data = newline.join(lines).encode(encoding)
    parsed = read_roster(data)
    assert parsed.entries == [
        (str(2026000 + n), name.strip()) for n, name in enumerate(people)
    ]
    assert parsed.encoding == {"gbk": "gb18030"}.get(encoding, encoding)
    assert parsed.delimiter == ("tab" if separator == "\t" else "comma")


def test_bytes_that_are_no_text_are_refused_with_a_reason():
    with pytest.raises(RosterError) as caught:
        read_roster(b"2026001,\x81\x20\n")
    assert "UTF-8, UTF-16 or GBK" in caught.value.problems[0].render()
    assert "UTF-8、UTF-16 或 GBK" in in_chinese(caught.value.problems[0])


@pytest.fixture
def world(db_app):
    """A class with a roster-less start; 王芳's number is taken by someone else."""
    sync_real_bank(db_app)
    now = datetime.now(UTC)
    with db_app.app_context():
        session = get_session()
        digest = hash_password(PASSWORD)
        teacher = create_user(session, "wang", role="teacher", password_hash=digest)
        room = create_class(
            session, teacher, "高二（3）班", now=now - timedelta(days=30)
        )
        ming = create_user(session, "ming")
        li = create_user(session, "lihua", display_name="李华")
        join_class(session, ming, room.join_code, student_number="2026001",
                   display_name="李小明", now=now - timedelta(days=20))  # fmt: skip
        join_class(session, li, room.join_code, student_number="2026002",
                   now=now - timedelta(days=20))  # fmt: skip
        session.commit()
        ids = {"class": room.id, "ming": ming.id, "lihua": li.id}
    # 李小明 practised yesterday; 李华 ten days ago.
    record(db_app, ids["ming"], graded_item("scores"), True, timedelta(days=1))
    record(db_app, ids["lihua"], graded_item("scores"), True, timedelta(days=10))
    client = db_app.test_client()
    sign_in(client, "wang")
    return {"app": db_app, "teacher": client, **ids}


def put_roster(world, data: bytes, content_type="text/csv"):
    return world["teacher"].put(
        f"/api/v1/classes/{world['class']}/roster",
        data=data,
        content_type=content_type,
    )


def roster_count(world) -> int:
    with world["app"].app_context():
        return get_session().query(RosterEntry).count()


def test_a_gbk_roster_uploads_over_the_api_and_says_so(world):
    """Is the GBK file Excel saves on Chinese Windows read, and named gb18030?"""
    response = put_roster(world, ROSTER.encode("gbk"))
    assert response.status_code == 200, response.json
    assert response.json["rows"] == 3
    assert response.json["encoding"] == "gb18030"
    assert response.json["delimiter"] == "comma"
    assert roster_count(world) == 3


@pytest.mark.parametrize(
    ("encoding", "name"),
    [("utf-8", "utf-8"), ("utf-8-sig", "utf-8-sig"), ("utf-16", "utf-16")],
)
def test_unicode_rosters_upload_too(world, encoding, name):
    response = put_roster(world, ROSTER.replace(",", "\t").encode(encoding))
    assert response.status_code == 200, response.json
    assert (response.json["rows"], response.json["encoding"]) == (3, name)
    assert response.json["delimiter"] == "tab"


def test_a_bad_roster_is_refused_by_line_and_nothing_is_written(world):
    put_roster(world, ROSTER.encode("gbk"))
    bad = "学号,姓名\n2026001,李小明\n2026002\n=1+1,甲\n2026001,乙\n"
    response = put_roster(world, bad.encode("gbk"))
    assert response.status_code == 400
    message = response.json["message"]
    assert "第 3 行" in message and "第 4 行" in message and "第 5 行" in message
    assert roster_count(world) == 3  # the earlier roster stays whole


def test_a_roster_sent_as_json_is_a_415(world):
    response = world["teacher"].put(
        f"/api/v1/classes/{world['class']}/roster", json={"rows": []}
    )
    assert response.status_code == 415


def test_the_roster_says_who_joined_and_who_joined_under_another_name(world):
    put_roster(world, ROSTER.encode("gbk"))
    response = world["teacher"].get(f"/api/v1/classes/{world['class']}/roster")
    assert response.status_code == 200
    entries = {e["student_number"]: e for e in response.json["entries"]}
    assert entries["2026001"]["status"] == "joined"
    assert entries["2026001"]["username"] == "ming"
    assert entries["2026002"]["status"] == "name_mismatch"
    assert entries["2026002"]["member_name"] == "李华"
    assert entries["2026003"]["status"] == "not_joined"
    assert [e["idle_this_week"] for e in response.json["entries"]] == [
        False,
        True,
        True,
    ]


def test_other_people_cannot_read_or_replace_the_roster(world):
    with world["app"].app_context():
        session = get_session()
        create_user(
            session, "zhao", role="teacher", password_hash=hash_password(PASSWORD)
        )
        session.commit()
    other = world["app"].test_client()
    sign_in(other, "zhao")
    url = f"/api/v1/classes/{world['class']}/roster"
    assert other.get(url).status_code == 404
    assert other.put(url, data=b"1,a\n", content_type="text/csv").status_code == 404
    assert roster_count(world) == 0


def test_the_roster_page_filters_who_has_not_practised_this_week(world):
    """Does the page show each status, and 本周未练习 list the idle and unjoined?"""
    client = world["teacher"]
    url = f"/teacher/classes/{world['class']}/roster"
    html = client.get(url).get_data(as_text=True)
    # Pasted from a spreadsheet: tab-separated text.
    response = client.post(
        url,
        data={
            "roster_text": ROSTER.replace(",", "\t"),
            "csrf_token": csrf_token(html),
        },
    )
    assert response.status_code == 302
    html = client.get(url).get_data(as_text=True)
    assert "已导入名单：3 人" in html and "制表符" in html
    assert "2026003" in html and "未加入" in html
    assert "以 李华（lihua）的名字加入" in html
    idle = client.get(url + "?show=idle").get_data(as_text=True)
    assert "本周未练习" in idle
    assert "2026002" in idle and "2026003" in idle and "2026001" not in idle


def test_a_gbk_file_uploads_on_the_page(world):
    client = world["teacher"]
    url = f"/teacher/classes/{world['class']}/roster"
    token = csrf_token(client.get(url).get_data(as_text=True))
    import io

    response = client.post(
        url,
        data={"roster": (io.BytesIO(ROSTER.encode("gbk")), "名单.csv"),
              "csrf_token": token},
        content_type="multipart/form-data",
        follow_redirects=True,
    )  # fmt: skip
    html = response.get_data(as_text=True)
    assert "GB18030/GBK" in html
    assert roster_count(world) == 3
