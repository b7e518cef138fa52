"""Syncing the question bank into the database: `sync_bank` and `questions sync`."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select

from quizsvc.bank import BankError, load
from quizsvc.cli import main
from quizsvc.models import Item, ItemSkill, Lesson, Skill
from quizsvc.services.bank_sync import sync_bank

T0 = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)


def snapshot(session):
    """Every synced row as plain values, to compare before and after."""
    rows = []
    for model in (Lesson, Skill, Item, ItemSkill):
        for row in session.scalars(select(model)):
            rows.append({c.key: getattr(row, c.key) for c in model.__table__.columns})
    return sorted(rows, key=repr)


def test_first_sync_adds_everything_and_a_second_changes_nothing(
    db_session, small_bank
):
    """Is syncing idempotent: run twice, and the second run writes nothing?"""
    first = sync_bank(db_session, small_bank, now=T0)
    db_session.commit()
    assert first.added["items"] == list(small_bank.questions)
    assert first.added["lessons"] == ["lesson-15", "lesson-16"]
    before = snapshot(db_session)
    second = sync_bank(db_session, small_bank, now=T0 + timedelta(days=1))
    db_session.commit()
    assert not second.changed
    assert second.unchanged == {"lessons": 2, "skills": 4, "items": 7}
    assert snapshot(db_session) == before


def test_items_keep_their_skills_in_order_and_bank_position(db_session, small_bank):
    """Does each item know its primary skill first, and its place in the bank?"""
    sync_bank(db_session, small_bank, now=T0)
    item = db_session.get(Item, "weights-2")
    assert item.skill_ids == ["weights", "scores"]
    assert item.position == list(small_bank.questions).index("weights-2")
    assert item.content["id"] == "weights-2" and item.type == "choice"
    assert db_session.get(Skill, "output").position == 3


def test_edits_update_removals_retire_and_returns_restore(db_session, small_bank):
    """Is an edited item updated, a removed one retired (kept), a returned one back?"""
    sync_bank(db_session, small_bank, now=T0)
    db_session.commit()
    edited = dict(small_bank.questions)
    edited["scores-1"] = dataclasses.replace(
        edited["scores-1"], skills=("scores", "weights"), content_hash="changed"
    )
    del edited["weights-2"]  # the last one, so no other item changes place
    report = sync_bank(
        db_session,
        dataclasses.replace(small_bank, questions=edited),
        now=T0 + timedelta(1),
    )
    db_session.commit()
    assert report.updated["items"] == ["scores-1"]
    assert report.retired["items"] == ["weights-2"]
    assert db_session.get(Item, "scores-1").skill_ids == ["scores", "weights"]
    retired = db_session.get(Item, "weights-2")
    assert retired is not None and retired.retired_at == T0 + timedelta(1)
    again = sync_bank(db_session, small_bank, now=T0 + timedelta(2))
    db_session.commit()
    assert again.restored["items"] == ["weights-2"]
    assert again.updated["items"] == ["scores-1"]
    assert db_session.get(Item, "weights-2").retired_at is None
    assert db_session.get(Item, "scores-1").skill_ids == ["scores"]


def test_moving_a_question_updates_its_place(db_session, small_bank):
    """When a question moves within the bank, does its item take the new place?"""
    sync_bank(db_session, small_bank, now=T0)
    moved = dict(reversed(list(small_bank.questions.items())))
    report = sync_bank(
        db_session, dataclasses.replace(small_bank, questions=moved), now=T0
    )
    middle = list(moved)[len(moved) // 2]
    assert set(report.updated["items"]) == set(moved) - {middle}
    assert db_session.get(Item, "weights-2").position == 0


def test_lessons_and_skills_follow_the_bank_too(db_session, small_bank):
    """Are a renamed skill updated and a dropped lesson retired, not deleted?"""
    sync_bank(db_session, small_bank, now=T0)
    skills = dict(small_bank.skills)
    skills["output"] = dataclasses.replace(
        skills["output"], title={"zh-CN": "输出", "en": "Output"}
    )
    lessons = {"lesson-16": small_bank.lessons["lesson-16"]}
    changed = dataclasses.replace(small_bank, skills=skills, lessons=lessons)
    report = sync_bank(db_session, changed, now=T0 + timedelta(1))
    assert report.updated["skills"] == ["output"]
    assert report.retired["lessons"] == ["lesson-15"]
    assert db_session.get(Skill, "output").title["en"] == "Output"
    assert db_session.get(Lesson, "lesson-15").retired_at is not None


def real_bank():
    try:
        return load()
    except BankError as exc:
        pytest.skip(f"the question bank does not load yet: {exc.problems[0]}")


def test_the_real_bank_syncs_and_resyncs_cleanly(db_session):
    """Does the repository's own bank load into the database, idempotently?"""
    bank = real_bank()
    report = sync_bank(db_session, bank, now=T0)
    db_session.commit()
    assert len(report.added["items"]) == len(bank.questions) > 0
    assert not sync_bank(db_session, bank, now=T0 + timedelta(1)).changed


def test_questions_sync_command_is_idempotent(db_app):
    """Does `quizsvc questions sync` load the bank and then report no change?"""
    real_bank()
    runner = db_app.test_cli_runner()
    first = runner.invoke(main, ["questions", "sync"])
    assert first.exit_code == 0, first.output
    assert "items: " in first.output and " added" in first.output
    second = runner.invoke(main, ["questions", "sync"])
    assert second.exit_code == 0, second.output
    assert "already matched the bank" in second.output


def test_questions_sync_refuses_an_invalid_bank_in_one_line(db_app, tmp_path):
    """Is a broken bank refused with exit code 2 and a pointer to `validate`?"""
    lesson = tmp_path / "lesson-x"
    lesson.mkdir()
    (lesson / "lesson.toml").write_text("this is [not valid toml\n")
    result = db_app.test_cli_runner().invoke(main, ["questions", "sync", str(tmp_path)])
    assert result.exit_code == 2
    assert "questions validate" in result.output
    assert "Traceback" not in result.output
