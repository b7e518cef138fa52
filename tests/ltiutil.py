"""A served quizsvc with simulated LMS platforms registered, and a browser for it.

`served_lti(backend)` starts `quizsvc serve` (tests/test_serve.py's
start_server) on SQLite or PostgreSQL, starts a Canvas- and a Moodle-flavoured
`SimulatedPlatform`, and registers both with `quizsvc lti add-platform` run as
a command. `Browser` is an HTTP client whose cookie jar behaves as a browser's
on a loopback address (Secure cookies over http://127.0.0.1, as Chromium
allows) and that follows an LTI launch through the platform's OIDC form post.
"""

from __future__ import annotations

import http.cookiejar
import os
import re
import shutil
import subprocess
import sys
from contextlib import contextmanager
from dataclasses import dataclass
from html import unescape
from pathlib import Path

import pytest
import requests
from sqlalchemy import func, select
from sqlalchemy.pool import NullPool

from tests.lti_platform import SimulatedPlatform
from tests.test_serve import start_server, stop_server

# Retries without the real waits (1, 2, 4, 8 s), and platform URLs over http.
LTI_ENV = {
    "QUIZSVC_LTI_ALLOW_HTTP": "true",
    "QUIZSVC_LTI_RETRY_DELAYS": "[0.01, 0.01, 0.01, 0.01]",
}


def quizsvc_command(instance: Path, *args: str) -> subprocess.CompletedProcess:
    """Run the `quizsvc` console script against an instance folder."""
    exe = shutil.which("quizsvc", path=str(Path(sys.executable).parent))
    env = {**os.environ, **LTI_ENV, "QUIZSVC_INSTANCE_PATH": str(instance)}
    env.pop("QUIZSVC_DATABASE_URL", None)
    return subprocess.run(
        [exe, *args], capture_output=True, text=True, env=env, timeout=120
    )


@dataclass
class ServedLti:
    """A running quizsvc with two platforms registered with it."""

    url: str
    instance: Path
    database_url: str
    canvas: SimulatedPlatform
    moodle: SimulatedPlatform

    def engine(self):
        from quizsvc.db import make_engine

        return make_engine(self.database_url, poolclass=NullPool)

    def count(self, model) -> int:
        engine = self.engine()
        try:
            with engine.connect() as connection:
                return connection.scalar(select(func.count()).select_from(model))
        finally:
            engine.dispose()

    def log(self) -> str:
        return (self.instance / "serve.log").read_text()

    def command(self, *args: str) -> subprocess.CompletedProcess:
        return quizsvc_command(self.instance, *args)


@contextmanager
def served_lti(tmp_path: Path, database_url: str | None):
    """Serve quizsvc (SQLite in the instance, or `database_url`) with two platforms."""
    instance = tmp_path / "instance"
    instance.mkdir()
    if database_url is not None:
        (instance / "config.py").write_text(f"DATABASE_URL = {database_url!r}\n")
    else:
        database_url = f"sqlite:///{instance / 'quizsvc.sqlite3'}"
    saved = {name: os.environ.get(name) for name in LTI_ENV}
    os.environ.update(LTI_ENV)
    try:
        process, url = start_server(instance)
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
    canvas, moodle = SimulatedPlatform("canvas"), SimulatedPlatform("moodle")
    try:
        for platform in (canvas, moodle):
            platform.tool_url = url
            result = quizsvc_command(
                instance, "lti", "add-platform", *platform.registration_args()
            )
            assert result.returncode == 0, result.stderr
        yield ServedLti(url, instance, database_url, canvas, moodle)
    finally:
        canvas.close()
        moodle.close()
        stop_server(process)


class LoopbackSession(requests.Session):
    """A requests session that sends Secure cookies to http://127.0.0.1.

    Browsers treat loopback addresses as secure contexts; Python's cookie jar
    sends Secure cookies over https only, and requests copies the session's
    jar (losing its policy) for every request, hence the second pass here.
    """

    def __init__(self):
        super().__init__()
        self.cookies.set_policy(
            http.cookiejar.DefaultCookiePolicy(
                secure_protocols=("https", "wss", "http")
            )
        )

    def prepare_request(self, request):
        prepared = super().prepare_request(request)
        prepared.headers.pop("Cookie", None)
        prepared.prepare_cookies(self.cookies)
        return prepared


class Browser:
    """A cookie-keeping HTTP client that launches quizsvc as a platform's user."""

    def __init__(self, served: ServedLti):
        self.served = served
        self.http = LoopbackSession()

    def get(self, path: str, **kwargs) -> requests.Response:
        return self.http.get(self._url(path), timeout=30, **kwargs)

    def post(self, path: str, **kwargs) -> requests.Response:
        return self.http.post(self._url(path), timeout=30, **kwargs)

    def _url(self, path: str) -> str:
        return path if path.startswith("http") else self.served.url + path.lstrip("/")

    def start_login(self, platform: SimulatedPlatform, person, course, **kwargs):
        """The platform's login initiation: quizsvc's redirect to the auth URL."""
        return self.get(
            platform.login_url(person, course, **kwargs), allow_redirects=False
        )

    def authorize(self, location: str) -> dict[str, str]:
        """Follow the redirect to the platform; return the form it posts back."""
        page = self.http.get(location, timeout=30)
        assert page.status_code == 200, page.text
        fields = dict(re.findall(r'name="(id_token|state)" value="([^"]*)"', page.text))
        action = re.search(r'action="([^"]+)"', page.text).group(1)
        return {"action": unescape(action), **fields}

    def launch(self, platform: SimulatedPlatform, person, course, **kwargs):
        """A whole launch; returns quizsvc's answer to the form post (not followed)."""
        login = self.start_login(platform, person, course, **kwargs)
        assert login.status_code == 302, login.text
        form = self.authorize(login.headers["Location"])
        return self.post(form.pop("action"), data=form, allow_redirects=False)

    def csrf(self, path: str) -> str:
        page = self.get(path)
        return re.search(r'name="csrf_token" value="([^"]+)"', page.text).group(1)


def form_fields(page: str) -> dict[str, str]:
    """The id_token and state of a platform's auto-posting form."""
    return dict(re.findall(r'name="(id_token|state)" value="([^"]*)"', page))


@pytest.fixture(
    scope="module",
    params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)],
)
def served(request, tmp_path_factory):
    """A module's served quizsvc with the simulated platforms, on each backend."""
    tmp = tmp_path_factory.mktemp("lti")
    if request.param == "sqlite":
        with served_lti(tmp, None) as running:
            yield running
        return
    from tests.conftest import postgres_schema

    with postgres_schema() as url, served_lti(tmp, url) as running:
        yield running
