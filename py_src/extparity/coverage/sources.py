"""The verified modules as coverage sees them: text, UTF-16 offsets to lines, and every function.

V8 reports offsets in UTF-16 code units of the script's text, so lines are found in those units.
The functions come from the syntax tree, not from V8: V8 omits a function from a take when
neither it nor its parent ran since the last one, so a function nothing ever calls would be
invisible in its reports; read from the source, it is an uncovered block. Which units are code
comes from the syntax tree too: a comment is no code, so a stretch that holds only comments is
no block, and a block begins and ends at its code (a marker comment above a statement must not
move the block's first line onto the comment, see ``markers``).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from ..project.config import Project
from ..project.hashing import sha256_hex
from ..subject.linker import FUNCTION_NODES, parse_source, parsed_modules, walk

PUNCTUATION = " \t\r\n{}();,"  # what a stretch may hold and still hold no code, besides comments


@dataclass(frozen=True)
class Function:
    start: int  # UTF-16 offsets, as V8 reports them
    end: int
    name: str
    line: int


@dataclass(frozen=True)
class Source:
    path: str  # tree-relative, as the extension serves it
    text: str
    sha256: str
    line_starts: tuple[int, ...]  # UTF-16 offset of each line's first unit
    functions: tuple[Function, ...]

    @property
    def length(self) -> int:
        return utf16_length(self.text)

    def line_of(self, offset: int) -> int:
        """1-based line of a UTF-16 offset."""
        return bisect.bisect_right(self.line_starts, offset)

    def lines(self, start: int, end: int) -> tuple[int, int]:
        """First and last line of the range ``[start, end)``, without a trailing newline's line."""
        return self.line_of(start), self.line_of(max(start, end - 1))

    def line_text(self, first: int, last: int) -> str:
        return "\n".join(self.text.split("\n")[first - 1:last])

    @cached_property
    def code(self) -> bytes:
        """Per UTF-16 unit of the text: 1 where it is code, 0 in a comment, white space or
        ``PUNCTUATION``."""
        units = self.text.encode("utf-16-le", "surrogatepass")
        ignored = {ord(ch) for ch in PUNCTUATION}
        mask = bytearray(0 if units[i + 1] == 0 and units[i] in ignored else 1 for i in range(0, len(units), 2))
        syntax, source = parse_source(self.text.encode("utf-8"), self.path)
        comments = [node for node in walk(syntax.root_node) if node.type == "comment"]
        if comments:
            parsed = source.decode("utf-8")  # without a byte order mark, which the text keeps
            shift = len(self.text) - len(parsed)
            to_unit = _byte_offsets(parsed, _utf16_offsets(parsed))
            for node in comments:
                start, end = to_unit[node.start_byte] + shift, to_unit[node.end_byte] + shift
                mask[start:end] = bytes(end - start)
        return bytes(mask)


def utf16_length(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def verified_sources(project: Project, tree: Path) -> dict[str, Source]:
    """Every module the entries reach in ``tree`` (the linker's graph), by path."""
    found = {}
    for path, syntax, data in parsed_modules(tree, [entry.module for entry in project.entries.values()]):
        text = data.decode("utf-8")
        units = _utf16_offsets(text)
        starts = list(line_starts(text))
        byte_to_unit = _byte_offsets(text, units)
        functions = []
        stack = [syntax.root_node]
        while stack:
            node = stack.pop()
            if node.is_named and node.type in FUNCTION_NODES:
                name = node.child_by_field_name("name")
                start, end = byte_to_unit[node.start_byte], byte_to_unit[node.end_byte]
                functions.append(Function(start, end, data[name.start_byte:name.end_byte].decode("utf-8") if name else "",
                                          bisect.bisect_right(starts, start)))
            stack.extend(node.children)
        found[path] = Source(path, text, sha256_hex((tree / path).read_bytes()), tuple(starts),
                             tuple(sorted(functions, key=lambda f: (f.start, -f.end))))
    return found


def line_starts(text: str) -> tuple[int, ...]:
    """The UTF-16 offset of each line's first unit."""
    units = _utf16_offsets(text)
    return tuple([0] + [units[i + 1] for i, ch in enumerate(text) if ch == "\n"])


def _utf16_offsets(text: str) -> list[int]:
    """UTF-16 offset of each character, and of the end."""
    offsets, unit = [], 0
    for ch in text:
        offsets.append(unit)
        unit += 2 if ord(ch) > 0xFFFF else 1
    offsets.append(unit)
    return offsets


def _byte_offsets(text: str, units: list[int]) -> dict[int, int]:
    """UTF-8 byte offset -> UTF-16 offset, at every character boundary."""
    mapping, byte = {}, 0
    for i, ch in enumerate(text):
        mapping[byte] = units[i]
        byte += len(ch.encode("utf-8"))
    mapping[byte] = units[-1]
    return mapping
