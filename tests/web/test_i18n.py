"""Interface language: zh-CN by default, English on request, every string translated."""

from __future__ import annotations

import gettext
import re
from pathlib import Path

import pytest
from babel.messages.extract import DEFAULT_KEYWORDS, extract_from_dir
from babel.messages.frontend import parse_mapping_cfg
from babel.messages.pofile import read_po

from tests.factories import make_learner, sign_in

ROOT = Path(__file__).resolve().parents[2]
TRANSLATIONS = ROOT / "quizsvc" / "translations"
CATALOG = TRANSLATIONS / "zh_Hans_CN" / "LC_MESSAGES"
# The README's `pybabel extract -F babel.cfg -k _l -k lazy_gettext -k N_`.
KEYWORDS = {**DEFAULT_KEYWORDS, "_l": None, "lazy_gettext": None, "N_": None}


def _key(message):
    return message if isinstance(message, str) else tuple(message)


def _source_messages() -> set:
    """The message ids `pybabel extract` finds in the code and templates."""
    with open(ROOT / "babel.cfg") as handle:
        method_map, options_map = parse_mapping_cfg(handle)
    return {
        _key(message)
        for _file, _line, message, _comments, _context in extract_from_dir(
            str(ROOT), method_map, options_map, keywords=KEYWORDS
        )
    }


def test_the_template_lists_exactly_the_strings_in_the_code():
    """Is messages.pot what `pybabel extract` makes of today's code?"""
    with open(TRANSLATIONS / "messages.pot", "rb") as handle:
        template = {_key(m.id) for m in read_po(handle) if m.id}
    source = _source_messages()
    assert template == source, (
        "messages.pot is stale (run the catalog update in README): "
        f"missing {sorted(map(str, source - template))}, "
        f"no longer used {sorted(map(str, template - source))}"
    )


def test_every_interface_string_has_a_chinese_translation():
    with open(CATALOG / "messages.po", "rb") as handle:
        catalog = read_po(handle, locale="zh_Hans_CN")
    translated = {}
    for message in catalog:
        if message.id:
            key = _key(message.id)
            strings = (
                message.string
                if isinstance(message.string, tuple)
                else (message.string,)
            )
            translated[key] = all(strings) and "fuzzy" not in message.flags
    missing = sorted(str(m) for m in _source_messages() if not translated.get(m))
    assert missing == [], "untranslated (run the catalog update in README): " + str(
        missing
    )


def test_compiled_catalog_matches_the_po_file():
    with open(CATALOG / "messages.po", "rb") as handle:
        catalog = read_po(handle, locale="zh_Hans_CN")
    with open(CATALOG / "messages.mo", "rb") as handle:
        compiled = gettext.GNUTranslations(handle)
    for message in catalog:
        if message.id and isinstance(message.id, str) and message.string:
            assert compiled.gettext(message.id) == message.string, message.id


def test_chinese_is_the_default_and_english_is_one_click_away(client):
    page = client.get("/lab").get_data(as_text=True)
    assert '<html lang="zh-CN">' in page and "实验台" in page
    english = client.get("/lab?lang=en").get_data(as_text=True)
    assert '<html lang="en">' in english and "Attention lab" in english
    # The choice sticks for the rest of the session.
    assert '<html lang="en">' in client.get("/explore").get_data(as_text=True)
    assert "中文" in client.get("/explore").get_data(as_text=True)


def test_unknown_language_falls_back_to_chinese(client):
    page = client.get("/lab?lang=xx").get_data(as_text=True)
    assert '<html lang="zh-CN">' in page


# --- which language a request gets ------------------------------------------------


def _html_lang(response) -> str:
    return re.search(r'<html lang="([^"]+)">', response.get_data(as_text=True))[1]


@pytest.mark.parametrize(
    ("header", "language"),
    [
        ("en-US,en;q=0.9", "en"),
        ("en-GB", "en"),
        ("zh-TW,zh;q=0.9", "zh-CN"),
        ("fr-FR,en;q=0.3", "en"),
        ("fr", "zh-CN"),
        ("", "zh-CN"),
    ],
)
def test_a_first_visit_follows_the_accept_language_header(client, header, language):
    """Does a visitor's browser language choose the page's language (else zh-CN)?"""
    response = client.get("/lab", headers={"Accept-Language": header})
    assert _html_lang(response) == language


def test_the_learners_setting_comes_before_the_header(db_app):
    """Does a learner who chose 中文 get Chinese from an English browser?"""
    make_learner(db_app, "ana")
    client = db_app.test_client()
    sign_in(client, "ana")
    english_browser = {"Accept-Language": "en-US,en;q=0.9"}
    assert _html_lang(client.get("/today", headers=english_browser)) == "zh-CN"
    client.patch("/api/v1/settings", json={"language": "en"})
    assert _html_lang(client.get("/today")) == "en"


def test_the_sessions_choice_comes_before_the_learners_setting(db_app):
    """Does ?lang= win over the setting, and stay for the rest of the session?"""
    make_learner(db_app, "ana")
    client = db_app.test_client()
    sign_in(client, "ana")
    assert _html_lang(client.get("/today?lang=en")) == "en"
    assert _html_lang(client.get("/today")) == "en"
    assert _html_lang(client.get("/today?lang=zh-CN")) == "zh-CN"
