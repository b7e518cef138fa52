"""Debian's Chromium for the browser tests: where it is, how it starts, the marks."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

# `pytestmark = BROWSER_MARKS` in a module of browser tests.
BROWSER_MARKS = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not Path(CHROMIUM).exists(),
        reason="Debian's chromium is not installed (.ci/run installs it "
        "with apt-get install -y chromium)",
    ),
]
