"""One TOML file of the bank being read: its data, and every problem at its line."""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from quizsvc.bank.lint import math_markup, punctuation
from quizsvc.bank.locate import Locator
from quizsvc.bank.model import LANGUAGES, Problem

_ID_PATTERN = re.compile(r"^[a-z0-9][a-z0-9._-]{0,79}$")


def display_path(path: Path) -> str:
    """Return `path` relative to the working folder when it is inside it."""
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


class SourceFile:
    """One TOML file being read: its display path, parsed data and problems."""

    def __init__(
        self,
        path: Path,
        display: str,
        problems: list[Problem],
        warnings: list[Problem] | None = None,
    ):
        self.path = path
        self.display = display
        self.problems = problems
        self.warnings = warnings if warnings is not None else []
        self.data: dict[str, Any] | None = None
        self.locator = Locator("")
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            self.report_line(1, f"the file is not UTF-8 text ({exc.reason})")
            return
        except OSError as exc:
            self.report_line(1, f"cannot read the file: {exc.strerror}")
            return
        self.locator = Locator(text)
        try:
            self.data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            message = str(exc)
            match = re.search(r"\(at line (\d+), column \d+\)", message)
            line = int(match.group(1)) if match else 1
            message = re.sub(
                r"\s*\(at (line \d+, column \d+|end of document)\)", "", message
            )
            self.report_line(line, f"invalid TOML: {message}")

    def report_line(self, line: int, message: str) -> None:
        self.problems.append(Problem(self.display, line, message))

    def warn(self, where: Sequence[str | int], message: str) -> None:
        """Note a cue or a doubt that does not make the bank invalid."""
        self.warnings.append(Problem(self.display, self.line(where), message))

    def report(self, where: Sequence[str | int], message: str) -> None:
        self.report_line(self.locator.line(where), message)

    def line(self, where: Sequence[str | int]) -> int:
        return self.locator.line(where)

    # Typed getters: each reports a problem and returns None on bad data.

    def keys(self, table: dict, allowed: Iterable[str], where: tuple) -> None:
        allowed = set(allowed)
        for key in table:
            if key not in allowed:
                self.report(
                    (*where, key),
                    f"unknown key {key!r} (allowed here: {', '.join(sorted(allowed))})",
                )

    def identifier(self, table: dict, where: tuple, key: str = "id") -> str | None:
        value = table.get(key)
        if value is None:
            self.report(where, f"missing {key!r}")
            return None
        if not isinstance(value, str) or not _ID_PATTERN.match(value):
            self.report(
                (*where, key),
                f"{key} {value!r} must be lowercase letters, digits, '.', '_' or '-' "
                "(starting with a letter or digit, at most 80 characters)",
            )
            return None
        return value

    def text(
        self, table: dict, key: str, where: tuple, required: bool = True
    ) -> dict | None:
        value = table.get(key)
        if value is None:
            if required:
                self.report(where, f"missing {key!r} (a table with zh-CN and en)")
            return None
        return self.bilingual(value, (*where, key), key)

    def bilingual(self, value: Any, where: tuple, label: str) -> dict | None:
        if not isinstance(value, dict):
            self.report(
                where,
                f"{label} must be a table with the keys zh-CN and en, "
                f'e.g. {label} = {{ zh-CN = "…", en = "…" }}',
            )
            return None
        ok = True
        for language in LANGUAGES:
            text = value.get(language)
            if text is None:
                self.report(where, f"{label} is missing the language {language}")
                ok = False
            elif not isinstance(text, str) or not text.strip():
                self.report(
                    (*where, language), f"{label}.{language} must be non-empty text"
                )
                ok = False
        for language in value:
            if language not in LANGUAGES:
                self.report(
                    (*where, language),
                    f"{label} has an unknown language key {language!r} "
                    "(expected zh-CN and en)",
                )
                ok = False
        if not ok:
            return None
        texts = {language: value[language].strip() for language in LANGUAGES}
        for language, text in texts.items():
            for message in punctuation(text, language) + math_markup(text):
                self.report((*where, language), f"{label}.{language}: {message}")
        return texts

    def string_list(self, table: dict, key: str, where: tuple) -> list[str] | None:
        value = table.get(key)
        if value is None:
            return []
        if not isinstance(value, list) or not all(
            isinstance(item, str) and item.strip() for item in value
        ):
            self.report((*where, key), f"{key} must be a list of non-empty strings")
            return None
        return value

    def table_list(self, table: dict, key: str, where: tuple) -> list[dict]:
        value = table.get(key, [])
        if not isinstance(value, list) or not all(isinstance(x, dict) for x in value):
            self.report(
                (*where, key), f"{key} must be an array of tables ([[{key}]] sections)"
            )
            return []
        return value
