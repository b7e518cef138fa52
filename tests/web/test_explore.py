"""The explore page shows how temperature and 1/√d change sharpness (JS or not)."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest


def _row_weights(html: str) -> list[float]:
    desc = re.search(r'id="explore-row".*?<desc>([^<]*)</desc>', html, re.S).group(1)
    return [float(part.split(": ")[1]) for part in desc.split("; ")]


def test_default_view_is_scaled_and_sums_to_one(client):
    response = client.get("/explore")
    assert response.status_code == 200
    weights = _row_weights(response.get_data(as_text=True))
    assert sum(weights) == pytest.approx(1.0, abs=0.02)
    assert 'type="range"' in response.get_data(as_text=True)


def test_without_scaling_large_d_is_sharper(client):
    scaled = _row_weights(
        client.get("/explore?d=256&t=1&scaled=1").get_data(as_text=True)
    )
    unscaled = _row_weights(client.get("/explore?d=256&t=1").get_data(as_text=True))
    assert max(unscaled) > max(scaled)


def test_low_temperature_is_sharper_than_high(client):
    cold = _row_weights(
        client.get("/explore?d=16&t=0.2&scaled=1").get_data(as_text=True)
    )
    hot = _row_weights(client.get("/explore?d=16&t=5&scaled=1").get_data(as_text=True))
    assert max(cold) > max(hot)
    assert np.std(hot) < np.std(cold)


def test_embedded_data_lets_the_script_redraw_every_d(client):
    html = client.get("/explore").get_data(as_text=True)
    payload = re.search(
        r'<script id="explore-data" type="application/json">(.*?)</script>', html, re.S
    ).group(1)
    data = json.loads(payload)
    assert sorted(int(d) for d in data["scores"]) == data["d_values"]
    assert np.array(data["scores"]["64"]).shape == (4, 6)


@pytest.mark.parametrize(
    "query", ["d=abc&t=zz", "d=-5&t=-1", "d=99999&t=1e308", "t=nan", "t=inf&d=1.5"]
)
def test_odd_parameters_are_clamped_not_errors(client, query):
    response = client.get("/explore?" + query)
    assert response.status_code == 200
    assert sum(_row_weights(response.get_data(as_text=True))) == pytest.approx(
        1, abs=0.02
    )
