"""Configuration layers, the instance folder and the health endpoint."""

from __future__ import annotations

from quizsvc import create_app


def test_defaults_put_sqlite_in_the_instance_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("QUIZSVC_INSTANCE_PATH", str(tmp_path / "inst"))
    monkeypatch.delenv("QUIZSVC_DATABASE_URL", raising=False)
    app = create_app()
    assert app.instance_path == str(tmp_path / "inst")
    assert (
        app.config["DATABASE_URL"]
        == f"sqlite:///{tmp_path / 'inst' / 'quizsvc.sqlite3'}"
    )


def test_environment_overrides_instance_config(tmp_path, monkeypatch):
    instance = tmp_path / "inst"
    instance.mkdir()
    (instance / "config.py").write_text(
        "DATABASE_URL = 'sqlite:///from-file.db'\nMAX_MATRIX_SIDE = 5\n"
    )
    monkeypatch.setenv("QUIZSVC_INSTANCE_PATH", str(instance))
    monkeypatch.setenv("QUIZSVC_DATABASE_URL", "sqlite:///from-env.db")
    app = create_app()
    assert app.config["DATABASE_URL"] == "sqlite:///from-env.db"
    assert app.config["MAX_MATRIX_SIDE"] == 5


def test_secret_key_is_generated_once_and_kept(tmp_path, monkeypatch):
    monkeypatch.setenv("QUIZSVC_INSTANCE_PATH", str(tmp_path))
    monkeypatch.delenv("QUIZSVC_SECRET_KEY", raising=False)
    first = create_app().config["SECRET_KEY"]
    second = create_app().config["SECRET_KEY"]
    assert first == second and len(first) >= 32
    assert (tmp_path / "secret_key").stat().st_mode & 0o077 == 0


def test_test_config_replaces_files_and_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("QUIZSVC_MAX_MATRIX_SIDE", "3")
    app = create_app({"TESTING": True, "DATABASE_URL": "sqlite://", "SECRET_KEY": "x"})
    assert app.config["MAX_MATRIX_SIDE"] == 16


def test_healthz_reports_ok(client):
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json["status"] == "ok"


def test_unknown_page_is_a_readable_404(client):
    response = client.get("/no-such-page")
    assert response.status_code == 404
    assert "<html" in response.get_data(as_text=True)
    api = client.get("/api/v1/no-such-thing")
    assert api.status_code == 404 and api.json["error"] == "not_found"


def test_front_page_welcomes_visitors_and_sends_learners_to_today(db_app):
    from tests.factories import make_learner, sign_in

    client = db_app.test_client()
    page = client.get("/")
    assert page.status_code == 200
    assert 'id="home-register"' in page.get_data(as_text=True)
    make_learner(db_app, "ana")
    sign_in(client, "ana")
    response = client.get("/")
    assert response.status_code == 302 and response.location.endswith("/today")


def test_error_pages_speak_the_learners_language(client):
    page = client.post("/login", data={"username": "x" * 400_000})
    assert page.status_code == 413
    assert "你提交的内容太大了" in page.get_data(as_text=True)
    english = client.get("/no-such-page?lang=en").get_data(as_text=True)
    assert "There is nothing at this address." in english
