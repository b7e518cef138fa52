"""What the pages say about the parameters that schedule a learner."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from quizsvc import scheduling
from quizsvc.db import get_session
from quizsvc.models import ClassParameters, FsrsParameters, User
from quizsvc.services.accounts import hash_password
from quizsvc.services.classes import create_class, join_class
from quizsvc.services.users import create_user
from tests.factories import PASSWORD, make_learner, sign_in

FITTED = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
PRIOR = tuple(round(v * 1.1, 4) for v in scheduling.DEFAULT_PARAMETERS)


@pytest.fixture
def app(page_app):
    return page_app


@pytest.fixture
def room(app):
    """A class taught by wang, with learners ana and bo."""
    with app.app_context():
        session = get_session()
        teacher = create_user(
            session, "wang", role="teacher", password_hash=hash_password(PASSWORD)
        )
        session.commit()
        teacher_id = teacher.id
    ana, bo = make_learner(app, "ana"), make_learner(app, "bo")
    with app.app_context():
        session = get_session()
        classroom = create_class(session, session.get(User, teacher_id), "三班 <b>")
        for learner in (ana, bo):
            join_class(session, session.get(User, learner), classroom.join_code)
        session.commit()
        return {"class": classroom.id, "ana": ana, "bo": bo}


def store_prior(app, class_id: int) -> None:
    with app.app_context():
        session = get_session()
        session.add(ClassParameters(
            class_id=class_id, parameters=list(PRIOR), fitted_at=FITTED,
            review_count=4321, learner_count=2,
        ))  # fmt: skip
        session.commit()


def settings_page(app, username: str, lang: str) -> str:
    client = app.test_client()
    sign_in(client, username)
    return client.get(f"/settings?lang={lang}").get_data(as_text=True)


def test_a_new_learner_reads_that_the_defaults_schedule_them(app, room):
    """Does a learner without any fit see the defaults and when a fit is tried?"""
    html = settings_page(app, "ana", "en")
    assert "FSRS-6's default parameters" in html
    assert "not measured on your own reviews yet" in html and "2000 reviews" in html
    zh = settings_page(app, "ana", "zh-CN")
    assert "FSRS-6 的默认参数" in zh and "尚未用你自己的复习测量" in zh


def test_a_member_reads_that_the_class_prior_schedules_them(app, room):
    """With a class prior, does a member see the class, its date and review count?"""
    store_prior(app, room["class"])
    html = settings_page(app, "ana", "en")
    # The class name is the teacher's text: escaped, never markup.
    assert "Your class's parameters (三班 &lt;b&gt;), fitted on 2026-03-01" in html
    assert "4321 reviews of its learners" in html


def test_a_learner_with_an_adopted_fit_sees_since_when_and_the_gain(app, room):
    """Does an own fit show its date, review count and measured interval?"""
    store_prior(app, room["class"])
    with app.app_context():
        session = get_session()
        session.add(FsrsParameters(
            user_id=room["bo"], parameters=list(PRIOR), fitted_at=FITTED,
            review_count=2500, log_loss_current=0.4346, log_loss_fitted=0.4296,
            adopted=True, method="blend_0.5", blend_target="class_prior",
            delta_log_loss_low=-0.0091, delta_log_loss_high=-0.0012,
        ))  # fmt: skip
        session.commit()
    html = settings_page(app, "bo", "en")
    assert "fitted to your own reviews since 2026-03-01" in html
    assert "on 2500 reviews" in html
    assert "log loss -0.0050 against the defaults" in html
    assert "between -0.0091 and -0.0012" in html
    zh = settings_page(app, "bo", "zh-CN")
    assert "根据你自己的复习拟合的参数" in zh and "-0.0091" in zh


def test_the_teacher_sees_the_class_parameters_and_their_date(app, room):
    """Does the class settings page show when the prior was fitted, and its values?"""
    client = app.test_client()
    sign_in(client, "wang")
    url = f"/teacher/classes/{room['class']}/settings?lang=en"
    before = client.get(url).get_data(as_text=True)
    assert "Not fitted yet" in before and "2000 reviews of at least 3" in before
    store_prior(app, room["class"])
    html = client.get(url).get_data(as_text=True)
    assert "Fitted on 2026-03-01" in html and "4321 reviews of 2 learners" in html
    assert f"<td>w20</td><td>{PRIOR[20]:.4f}</td>" in html
    zh = client.get(url.replace("lang=en", "lang=zh-CN")).get_data(as_text=True)
    assert "班级记忆参数" in zh and "4321 次复习" in zh
