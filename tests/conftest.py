"""Shared fixtures: an app on a temporary instance folder, its client and CLI runner."""

from __future__ import annotations

import os

from hypothesis import settings

# Locally each run explores new examples (and replays any failure it kept in
# .hypothesis/); CI, on a fresh clone, runs the same examples every time, so
# a red run is reproducible and a green one is not luck. `--hypothesis-seed`
# or HYPOTHESIS_PROFILE=default explores in CI too.
settings.register_profile("ci", derandomize=True, print_blob=True)
settings.load_profile(
    os.environ.get("HYPOTHESIS_PROFILE")
    or ("ci" if os.environ.get("CI") else "default")
)

# The fixtures live in tests/fixtures/, one module per concern.
pytest_plugins = [
    "tests.fixtures.apps",
    "tests.fixtures.databases",
    "tests.fixtures.banks",
    "tests.fixtures.pages",
    "tests.fixtures.browsers",
]
