"""What people and screen readers get from the server's text: heatmap labels
that contrast at every weight, "undefined" in the page's language, Chinese
marked on English pages, answers shown as the learner picked them."""

from __future__ import annotations

import re

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from quizsvc.web.charts import heatmap_svg, label_ink, recall_grid_svg
from quizsvc.web.filters import lang_span, text_lang, typed_answer
from tests.factories import contrast, rgb


def label_contrasts(svg: str) -> list[float]:
    """Each cell label's contrast against its cell, read from the drawn SVG."""
    fills = re.findall(r'<rect class="(?:hm|cell)"[^>]*?fill="(rgb\([^"]+\))"', svg)
    inks = re.findall(
        r'<text [^>]*?fill="(#[0-9a-f]{6})" class="(?:cell|cell-value)"', svg
    )
    assert fills and len(fills) == len(inks)
    return [contrast(rgb(f), rgb(i)) for f, i in zip(fills, inks, strict=True)]


def test_every_heatmap_label_reaches_aa_contrast_at_any_weight(app):
    """Is each number drawn on a heatmap cell at least 4.5:1 against its shade,
    from 0 to 1 in steps of 0.0005 (the old rule fell to 3.53:1 near 0.6)?"""
    weights = np.linspace(0, 1, 2001).reshape(-1, 1)
    with app.test_request_context():
        svg = str(heatmap_svg(weights, title="A"))
        grid = str(
            recall_grid_svg(
                weights[:400].reshape(20, 20),
                row_labels=[f"r{i}" for i in range(20)],
                col_labels=[f"c{j}" for j in range(20)],
                col_titles=[f"c{j}" for j in range(20)],
                title="recall",
            )
        )
    assert min(label_contrasts(svg)) >= 4.5
    assert min(label_contrasts(grid)) >= 4.5


@given(st.floats(min_value=0, max_value=1))
def test_the_ink_rule_contrasts_with_any_shade(weight):
    """Whatever the weight, is black or white (the one chosen) readable on it?"""
    start, end = np.array([244, 248, 252]), np.array([8, 48, 107])
    shade = tuple(
        int(round(s + (e - s) * weight)) for s, e in zip(start, end, strict=True)
    )
    assert contrast(shade, rgb(label_ink(weight))) >= 4.5


def test_undefined_weights_are_described_in_the_pages_language(app):
    """Does a heatmap of a fully masked row say 未定义 on a Chinese page?"""
    weights = np.array([[0.5, 0.5], [np.nan, np.nan]])
    with app.test_request_context("/?lang=zh-CN"):
        zh = str(heatmap_svg(weights, title="A"))
    with app.test_request_context("/?lang=en"):
        en = str(heatmap_svg(weights, title="A"))
    assert "q1: k0=未定义, k1=未定义" in zh and "undefined" not in zh.replace(
        "undefined-hatch", ""
    )
    assert "q1: k0=undefined, k1=undefined" in en


def test_chinese_that_people_wrote_is_marked_on_english_pages(app):
    """Is a Chinese name or explanation marked lang="zh-CN" on an English page,
    and left alone on a Chinese one or when it holds no Chinese?"""
    with app.test_request_context("/?lang=en"):
        assert text_lang("我把分数除错了") == ' lang="zh-CN"'
        assert text_lang("Ana") == "" and text_lang(None) == ""
        assert lang_span("李<小>梅") == '<span lang="zh-CN">李&lt;小&gt;梅</span>'
        assert lang_span("Ana <b>") == "Ana &lt;b&gt;"
    with app.test_request_context("/?lang=zh-CN"):
        assert text_lang("我把分数除错了") == ""
        assert lang_span("李小梅") == "李小梅"


def test_answers_are_shown_as_the_steps_and_options_picked(app):
    """Does a teacher see an ordering or a choice as the texts the learner
    picked, never their ids, a matrix as rows of plain numbers (never JSON),
    and what cannot be read exactly as typed?"""
    with app.test_request_context("/?lang=zh-CN"):
        order = typed_answer('["dot", "scale-mask"]', "l16-hand-order-of-steps")
        choice = typed_answer("a", "l16-hand-diagnose")
        matrix = typed_answer('{"S": [["1", "2"]]}', "l16-hand-generated-lesson")
        broken = typed_answer("[not json", "l16-hand-order-of-steps")
    assert order.startswith("算出每个 query 与每个 key 的点积 QKᵀ → ")
    assert "dot" not in order
    assert choice == "忘了除以 √d"
    assert matrix == "S = [[1, 2]]"
    assert broken == "[not json"
