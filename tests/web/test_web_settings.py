"""The settings page: daily limits, time zone, language, and personal API tokens."""

from __future__ import annotations

import re

import pytest

from quizsvc.db import get_session
from quizsvc.models import LearnerSettings, User
from tests.factories import csrf_token, make_learner, sign_in

VALID = {
    "desired_retention": "0.85",
    "new_per_day": "15",
    "reviews_per_day": "150",
    "timezone": "Europe/Berlin",
    "rollover_hour": "3",
    "two_button_mode": "1",
    "language": "zh-CN",
}


@pytest.fixture
def app(page_app):
    return page_app


@pytest.fixture
def client(learner_client):
    return learner_client


def saved(app, user_id: int) -> tuple[LearnerSettings | None, User]:
    with app.app_context():
        session = get_session()
        return session.get(LearnerSettings, user_id), session.get(User, user_id)


def secret_on(html: str) -> str:
    return re.search(r'id="new-token-secret" value="([^"]+)"', html).group(1)


def test_signed_out_visitors_are_sent_to_log_in(app):
    client = app.test_client()
    for response in (
        client.get("/settings"),
        client.post("/settings", data=VALID),
        client.post("/settings/tokens", data={"name": "x"}),
        client.post("/settings/tokens/1/revoke"),
    ):
        assert response.status_code == 302 and "/login" in response.location


def test_the_form_starts_from_the_defaults(client):
    html = client.get("/settings?lang=en").get_data(as_text=True)
    assert re.search(
        r'id="desired_retention" name="desired_retention" value="0.9"', html
    )
    assert re.search(r'id="new_per_day" name="new_per_day" value="10"', html)
    assert re.search(r'id="timezone" name="timezone" value="Asia/Shanghai"', html)
    assert '<option value="4" selected>04:00</option>' in html
    assert 'name="two_button_mode" value="1">' in html  # not checked
    assert "You have no tokens." in html


def test_saving_stores_every_setting_and_the_profile_time_zone(client, app, learner):
    response = client.post("/settings", data=VALID)
    assert response.status_code == 302 and response.location.endswith("/settings")
    settings, user = saved(app, learner)
    assert (
        settings.desired_retention,
        settings.new_per_day,
        settings.reviews_per_day,
        settings.timezone,
        settings.rollover_hour,
        settings.two_button_mode,
    ) == (0.85, 15, 150, "Europe/Berlin", 3, True)
    assert user.timezone == "Europe/Berlin"
    html = client.get("/settings").get_data(as_text=True)
    assert 'name="two_button_mode" value="1" checked' in html


def test_an_unticked_box_turns_two_button_mode_off(client, app, learner):
    client.post("/settings", data=VALID)
    client.post(
        "/settings", data={k: v for k, v in VALID.items() if k != "two_button_mode"}
    )
    assert saved(app, learner)[0].two_button_mode is False


def test_bad_values_are_marked_at_their_fields_and_nothing_is_saved(
    client, app, learner
):
    form = {
        **VALID,
        "desired_retention": "1.5",
        "timezone": "Mars/Olympus",
        "new_per_day": "lots",
    }
    response = client.post("/settings?lang=en", data=form)
    html = response.get_data(as_text=True)
    assert response.status_code == 400
    for field in ("desired_retention", "timezone", "new_per_day"):
        assert f'id="{field}-error" role="alert"' in html
        assert re.search(rf'id="{field}"[^>]*aria-invalid="true"', html)
    assert 'id="reviews_per_day-error"' not in html
    assert 'value="Mars/Olympus"' in html  # what was typed stays
    settings, user = saved(app, learner)
    assert settings is None and user.timezone == "Asia/Shanghai"


BROKEN_RULES = [
    ("desired_retention", "0.5"),
    ("desired_retention", "nan"),
    ("new_per_day", "-1"),
    ("new_per_day", "2.5"),
    ("reviews_per_day", "99999"),
    ("rollover_hour", "24"),
    ("language", "fr"),
    ("timezone", ""),
]


def test_each_rule_is_enforced(client, app, learner):
    for field, value in BROKEN_RULES:
        response = client.post("/settings", data={**VALID, field: value})
        assert response.status_code == 400, (field, value)
        assert f'id="{field}-error"' in response.get_data(as_text=True)
    assert saved(app, learner)[0] is None


def test_the_language_setting_drives_the_interface(client):
    """Does a learner who chose English get English pages without ?lang=?"""
    assert '<html lang="zh-CN">' in client.get("/today").get_data(as_text=True)
    client.post("/settings", data={**VALID, "language": "en"})
    assert '<html lang="en">' in client.get("/today").get_data(as_text=True)
    assert '<html lang="en">' in client.get("/assess").get_data(as_text=True)


def test_an_explicit_switch_wins_until_the_setting_is_saved_again(client):
    client.post("/settings", data={**VALID, "language": "en"})
    client.get("/today?lang=zh-CN")
    assert '<html lang="zh-CN">' in client.get("/today").get_data(as_text=True)
    client.post("/settings", data={**VALID, "language": "zh-CN"})
    client.post("/settings", data={**VALID, "language": "en"})
    assert '<html lang="en">' in client.get("/today").get_data(as_text=True)


def test_anonymous_pages_keep_the_default_language(app):
    assert '<html lang="zh-CN">' in app.test_client().get("/practice").get_data(
        as_text=True
    )


# --- tokens --------------------------------------------------------------------------


def test_a_new_token_is_shown_once_and_works(client, app):
    response = client.post("/settings/tokens", data={"name": "notebook"})
    html = response.get_data(as_text=True)
    assert response.status_code == 200
    assert response.headers["Cache-Control"] == "no-store"
    secret = secret_on(html)
    assert secret.startswith("qz_")
    listed = client.get("/settings").get_data(as_text=True)
    assert "notebook" in listed and secret not in listed
    api = app.test_client().get(
        "/api/v1/settings", headers={"Authorization": f"Bearer {secret}"}
    )
    assert api.status_code == 200


def test_a_revoked_token_stops_working(client, app):
    secret = secret_on(
        client.post("/settings/tokens", data={"name": "cron"}).get_data(as_text=True)
    )
    token_id = re.search(
        r'data-token-id="(\d+)"', client.get("/settings").get_data(as_text=True)
    ).group(1)
    response = client.post(f"/settings/tokens/{token_id}/revoke?lang=en")
    assert response.status_code == 302 and response.location.endswith(
        "/settings#tokens"
    )
    after = client.get("/settings").get_data(as_text=True)
    assert "is revoked" in after  # the flash names it once...
    assert "data-token-id" not in after  # ...but it is no longer listed
    api = app.test_client().get(
        "/api/v1/settings", headers={"Authorization": f"Bearer {secret}"}
    )
    assert api.status_code == 401 and api.json["error"] == "invalid_token"


def test_another_learners_token_cannot_be_revoked(app, client):
    make_learner(app, "bo")
    bo = app.test_client()
    sign_in(bo, "bo")
    secret = secret_on(
        bo.post("/settings/tokens", data={"name": "bo's"}).get_data(as_text=True)
    )
    token_id = re.search(
        r'data-token-id="(\d+)"', bo.get("/settings").get_data(as_text=True)
    ).group(1)
    assert "bo&#39;s" not in client.get("/settings").get_data(as_text=True)
    assert client.post(f"/settings/tokens/{token_id}/revoke").status_code == 404
    assert client.post("/settings/tokens/999999/revoke").status_code == 404
    api = app.test_client().get(
        "/api/v1/settings", headers={"Authorization": f"Bearer {secret}"}
    )
    assert api.status_code == 200  # still Bo's working token


@pytest.mark.parametrize("name", ["", "   ", "x" * 101])
def test_a_token_needs_a_sensible_name(client, name):
    response = client.post("/settings/tokens?lang=en", data={"name": name})
    assert response.status_code == 400
    assert 'id="token-error"' in response.get_data(as_text=True)
    assert "You have no tokens." in response.get_data(as_text=True)


def test_forms_need_the_csrf_token(app, learner):
    app.config["WTF_CSRF_ENABLED"] = True
    client = app.test_client()
    sign_in(client, "ana")
    assert client.post("/settings", data=VALID).status_code == 400
    assert client.post("/settings/tokens", data={"name": "x"}).status_code == 400
    assert client.post("/settings/tokens/1/revoke").status_code == 400
    assert saved(app, learner)[0] is None
    token = csrf_token(client.get("/settings").get_data(as_text=True))
    assert (
        client.post("/settings", data={**VALID, "csrf_token": token}).status_code == 302
    )


def test_an_oversized_form_is_refused(client):
    assert (
        client.post("/settings", data={**VALID, "timezone": "x" * 300_000}).status_code
        == 413
    )
