"""Mathematics in bank texts is set as HTML on pages and stays plain elsewhere."""

from __future__ import annotations

from flask import render_template

import quizsvc.bank as bank
from quizsvc.bank.markup import math_html


def test_the_math_filter_sets_powers_and_escapes_everything_else(app):
    """Does `| math` make superscripts of ^(…) while never passing raw HTML?"""
    template = app.jinja_env.from_string("{{ text | math }}")
    shown = template.render(text="<b>e^(−mᵢ)</b> & e^0.5 < Tk^-1")
    assert shown == (
        "&lt;b&gt;e<sup>−mᵢ</sup>&lt;/b&gt; &amp; e<sup>0.5</sup> &lt; Tk<sup>-1</sup>"
    )
    assert template.render(text=None) == ""


def test_a_lesson_note_shows_its_powers_as_superscripts(app):
    """Does the softmax note show e^(−mᵢ) as e<sup>−mᵢ</sup>, with no braces?"""
    note = bank.load().notes["l16-softmax"]
    with app.test_request_context("/notes/l16-softmax"):
        page = render_template("drill/note.html", note=note)
    assert "e<sup>−mᵢ</sup>" in page
    assert (
        "^(" not in page and "{" not in page.split("<article")[1].split("</article>")[0]
    )


def test_every_bank_text_renders_without_leftover_markup():
    """Does every text of the bank render with no caret or brace left over?"""
    loaded = bank.load()
    texts = [n.body for n in loaded.notes.values()]
    texts += [q.prompt for q in loaded.questions.values()]
    texts += [q.explanation for q in loaded.questions.values()]
    for text in texts:
        for language in bank.LANGUAGES:
            shown = math_html(text[language])
            assert "^" not in shown and "{" not in shown, text[language]
