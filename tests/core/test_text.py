"""The one language picker for bilingual content."""

from hypothesis import given
from hypothesis import strategies as st

from quizsvc.text import bilingual, pick


def test_the_asked_language_wins():
    """Does a learner reading English get the English text?"""
    text = bilingual("权重", "weights")
    assert pick(text, "en") == "weights"
    assert pick(text, "zh-CN") == "权重"


def test_a_missing_language_falls_back_to_chinese_then_to_any():
    """Does a text missing the asked language show Chinese, or else what there is?"""
    assert pick({"zh-CN": "权重", "en": ""}, "en") == "权重"
    assert pick({"en": "weights"}, "zh-CN") == "weights"
    assert pick({}, "en") == ""
    assert pick(None, "en") == ""


@given(st.text(), st.sampled_from(["zh-CN", "en", "fr"]))
def test_plain_strings_pass_through(text, lang):
    """Is a plain string (already one language) shown as it is?"""
    assert pick(text, lang) == text
