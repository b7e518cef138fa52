"""Find the line of a key in a TOML file; tomllib gives lines only for syntax errors."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

_HEADER = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")


class Locator:
    """Map a key path such as ("questions", 3, "options", 1, "why") to a line."""

    def __init__(self, text: str):
        self.lines = text.splitlines()
        # Lines inside a multi-line string are text, never keys or headers, even
        # when a note's paragraph starts with "[Tq, Tk]" or "id =".
        self.in_string = _lines_inside_multiline_strings(self.lines)

    def _headers(self, start: int, stop: int) -> list[tuple[int, str, bool]]:
        found = []
        for number in range(start, stop):
            line = self.lines[number]
            match = None if number in self.in_string else _HEADER.match(line)
            if match:
                is_array = line.lstrip().startswith("[[")
                name = re.sub(r"\s*\.\s*", ".", match.group(1)).replace('"', "")
                found.append((number, name, is_array))
        return found

    def line(self, path: Sequence[str | int]) -> int:
        """Return the 1-based line that best matches `path` (1 if unknown)."""
        start, stop, prefix, best = 0, len(self.lines), "", 0
        index = 0
        while index < len(path):
            key = path[index]
            following = path[index + 1] if index + 1 < len(path) else None
            name = f"{prefix}.{key}" if prefix else str(key)
            if isinstance(following, int):
                headers = [
                    h for h in self._headers(start, stop) if h[2] and h[1] == name
                ]
                if following < len(headers):
                    header_line = headers[following][0]
                    stop = self._block_end(header_line, stop, name)
                    start, best, prefix = header_line, header_line, name
                    index += 2
                    if index == len(path):
                        # A whole entry: its id line is where people look.
                        id_line = self._key_line("id", start, stop)
                        return (id_line if id_line is not None else best) + 1
                    continue
                # Inline arrays: point at the key itself.
                found = self._key_line(str(key), start, stop)
                return (found if found is not None else best) + 1
            sub_table = [
                h for h in self._headers(start, stop) if not h[2] and h[1] == name
            ]
            if sub_table:
                header_line = sub_table[0][0]
                stop = self._block_end(header_line, stop, name)
                start, best, prefix = header_line, header_line, name
                index += 1
                continue
            found = self._key_line(str(key), start, stop, following)
            if found is None:
                # No `key = …` line: the key may be an array of [[tables]].
                arrays = [
                    h for h in self._headers(start, stop) if h[2] and h[1] == name
                ]
                found = arrays[0][0] if arrays else None
            return (found if found is not None else best) + 1
        return best + 1

    def _block_end(self, header_line: int, stop: int, name: str) -> int:
        for number, other, _ in self._headers(header_line + 1, stop):
            if not other.startswith(name + "."):
                return number
        return stop

    def _key_line(
        self, key: str, start: int, stop: int, subkey: Any = None
    ) -> int | None:
        quoted = rf'(?:{re.escape(key)}|"{re.escape(key)}")'
        if isinstance(subkey, str):
            dotted = re.compile(
                rf'^\s*{quoted}\s*\.\s*(?:{re.escape(subkey)}|"{re.escape(subkey)}")'
                r"\s*="
            )
            for number in range(start, stop):
                if number not in self.in_string and dotted.match(self.lines[number]):
                    return number
        plain = re.compile(rf"^\s*{quoted}\s*[.=]")
        for number in range(start, stop):
            line = self.lines[number]
            if number in self.in_string:
                continue
            if _HEADER.match(line) and number != start:
                # A key after a sub-table header belongs to that sub-table.
                break
            if plain.match(line):
                return number
        return None


def _lines_inside_multiline_strings(lines: Sequence[str]) -> set[int]:
    """Return the numbers of the lines that begin inside a triple-quoted string."""
    inside: set[int] = set()
    delimiter: str | None = None
    for number, line in enumerate(lines):
        if delimiter is not None:
            inside.add(number)
        position = 0
        while True:
            if delimiter is None:
                found = [
                    (line.find(d, position), d)
                    for d in ('"""', "'''")
                    if line.find(d, position) >= 0
                ]
                if not found:
                    break
                position, delimiter = min(found)
                position += 3
            else:
                end = line.find(delimiter, position)
                if end < 0:
                    break
                position, delimiter = end + 3, None
    return inside
