"""`quizsvc serve` believes X-Forwarded-* only from the proxies it is told of."""

from __future__ import annotations

import urllib.request

import pytest

from tests.fixtures.serving import start_server, stop_server


def headers_of(url: str) -> dict[str, str]:
    """GET the sign-in page over plain HTTP, claiming HTTPS in X-Forwarded-Proto."""
    request = urllib.request.Request(
        url + "login", headers={"X-Forwarded-Proto": "https"}
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return {
            "hsts": response.headers.get("Strict-Transport-Security", ""),
            "cookie": response.headers.get("Set-Cookie", ""),
        }


@pytest.mark.slow
def test_a_client_cannot_claim_https_without_trusted_proxies(tmp_path, monkeypatch):
    """With no trusted proxy (the default), does a plain-HTTP answer to a local
    client that claims HTTPS get neither HSTS nor a Secure cookie?"""
    monkeypatch.delenv("QUIZSVC_TRUSTED_PROXIES", raising=False)
    monkeypatch.delenv("FORWARDED_ALLOW_IPS", raising=False)
    process, url = start_server(tmp_path)
    try:
        seen = headers_of(url)
    finally:
        stop_server(process)
    assert seen["hsts"] == ""
    assert "session=" in seen["cookie"] and "Secure" not in seen["cookie"]


@pytest.mark.slow
def test_a_trusted_proxy_says_the_request_came_over_https(tmp_path, monkeypatch):
    monkeypatch.setenv("QUIZSVC_TRUSTED_PROXIES", "1")
    process, url = start_server(tmp_path)
    try:
        seen = headers_of(url)
    finally:
        stop_server(process)
    assert seen["hsts"].startswith("max-age=")
    assert "Secure" in seen["cookie"]
