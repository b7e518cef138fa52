"""Schemathesis against the OpenAPI description, as a signed-in learner.

Every operation gets generated requests, valid and invalid; a 5xx, or a
response whose status, content type or body the description does not allow,
fails the test. Bounded for CI; scripts/fuzz_api.py runs the long version.
"""

from __future__ import annotations

import pytest

from scripts.fuzz_api import fuzz, prepare

EXAMPLES_PER_OPERATION = 20


@pytest.mark.slow
def test_every_operation_matches_its_description(db_app):
    db_app.config["RATELIMIT_ENABLED"] = False
    report = fuzz(db_app, prepare(db_app), examples=EXAMPLES_PER_OPERATION, seed=0)
    assert report.requests >= 300
    assert report.failures == [], "\n".join(report.lines())
