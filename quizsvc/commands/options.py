"""Options several commands share, declared once."""

from __future__ import annotations

import click

from quizsvc.bank import LANGUAGES


def lang_option(help_text: str):
    """A `--lang` option: zh-CN (the default) or en."""
    return click.option(
        "--lang",
        type=click.Choice(LANGUAGES),
        default="zh-CN",
        show_default=True,
        help=help_text,
    )
