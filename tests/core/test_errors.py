"""quizsvc.errors: a code, a status, a field, and a message rendered in a language."""

from __future__ import annotations

import pytest

from quizsvc import errors
from quizsvc.errors import N_, Message, QuizError
from quizsvc.services import Conflict, InvalidInput, NotFound, ServiceError

CHINESE = {
    "The field %(name)s": "字段“%(name)s”",
    "%(where)s is wrong.": "%(where)s不对。",
    ", ": "、",
    "Pick one of %(choices)s.": "请选 %(choices)s 之一。",
}


def chinese(msgid: str) -> str:
    return CHINESE.get(msgid, msgid)


def test_a_message_renders_its_parameters_in_each_language():
    """Are nested messages translated, content picked and lists joined per language?"""
    where = Message(N_("The field %(name)s"), name="x")
    assert Message(N_("%(where)s is wrong."), where=where).render() == (
        "The field x is wrong."
    )
    assert (
        Message(N_("%(where)s is wrong."), where=where).render(chinese, "zh-CN")
        == "字段“x”不对。"
    )
    choices = Message(N_("Pick one of %(choices)s."), choices=["a", "b"])
    assert choices.render() == "Pick one of a, b."
    assert choices.render(chinese, "zh-CN") == "请选 a、b 之一。"
    steps = Message(
        N_("Pick one of %(choices)s."),
        choices=[{"zh-CN": "甲", "en": "first"}, {"zh-CN": "乙", "en": "second"}],
    )
    assert steps.render() == "Pick one of first, second."
    assert steps.render(chinese, "zh-CN") == "请选 甲、乙 之一。"


def test_a_message_without_parameters_keeps_its_percent_signs():
    """Is a msgid with no parameters shown as it is, not %-formatted?"""
    assert Message("100% sure").render() == "100% sure"


def test_an_error_carries_code_status_field_and_an_english_str():
    """Does an error say its code, status and field, and read in English as str()?"""
    exc = InvalidInput(N_("The field %(name)s"), field="name", name="x")
    assert (exc.code, exc.status, exc.field) == ("invalid_input", 400, "name")
    assert str(exc) == "The field x" and exc.params == {"name": "x"}
    assert exc.render(chinese, "zh-CN") == "字段“x”"
    renamed = errors.BadRequest(N_("missing"), code="missing_field")
    assert renamed.code == "missing_field" and errors.BadRequest.code == "invalid_input"


def test_content_from_the_core_is_picked_not_translated():
    """Is an error carrying bilingual content shown in the language asked for?"""
    exc = InvalidInput(content={"zh-CN": "第 1 行不对。", "en": "Row 1 is wrong."})
    assert str(exc) == "Row 1 is wrong."
    assert exc.render(chinese, "zh-CN") == "第 1 行不对。"


@pytest.mark.parametrize(
    ("error", "status", "code", "family"),
    [
        (NotFound(), 404, "not_found", errors.NotFound),
        (InvalidInput(), 400, "invalid_input", errors.BadRequest),
        (Conflict(), 409, "conflict", errors.Conflict),
        (ServiceError(), 400, "invalid", QuizError),
        (errors.Unauthorized(), 401, "unauthorized", QuizError),
        (errors.Forbidden(), 403, "forbidden", QuizError),
        (errors.UnsupportedMediaType(), 415, "unsupported_media_type", QuizError),
        (errors.Locked(), 423, "closed_book", QuizError),
    ],
)
def test_each_error_class_has_one_status(error, status, code, family):
    """Is the status a property of the class (the one status map), with a message?"""
    assert (error.status, error.code) == (status, code)
    assert isinstance(error, family) and str(error)


def test_a_weak_password_belongs_to_the_password_field():
    """Is the weak-password error routed to its field by name, not by its words?"""
    from quizsvc.services.accounts import check_password_rules

    with pytest.raises(InvalidInput) as caught:
        check_password_rules("password", "ana")
    assert caught.value.code == "weak_password" and caught.value.field == "password"
