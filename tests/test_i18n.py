"""Interface language: zh-CN by default, English on request, every string translated."""

from __future__ import annotations

import gettext
from pathlib import Path

from babel.messages.extract import extract_from_dir
from babel.messages.pofile import read_po

ROOT = Path(__file__).resolve().parents[1]
CATALOG = ROOT / "quizsvc" / "translations" / "zh_Hans_CN" / "LC_MESSAGES"
KEYWORDS = {
    "_": None,
    "gettext": None,
    "ngettext": (1, 2),
    "_l": None,
    "lazy_gettext": None,
}


def _source_messages() -> set:
    found = set()
    for _file, _line, message, _comments, _context in extract_from_dir(
        str(ROOT / "quizsvc"),
        method_map=[("**.py", "python"), ("templates/**.html", "jinja2")],
        keywords={**KEYWORDS, "ngettext": (1, 2)},
    ):
        found.add(message if isinstance(message, str) else tuple(message))
    return found


def test_every_interface_string_has_a_chinese_translation():
    with open(CATALOG / "messages.po", "rb") as handle:
        catalog = read_po(handle, locale="zh_Hans_CN")
    translated = {}
    for message in catalog:
        if message.id:
            key = message.id if isinstance(message.id, str) else tuple(message.id)
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
