"""Source maps: locations in a built file given in the sources it was built from.

Why: a bundler's output is one minified line per chunk, so "background.js:1" names nothing a
team can open; with the map the bundler wrote (``build.sourcemap``), the same place is
``utils/toolcalls.ts:42``. Only what the harness reports needs this (a drift's first differing
line, an engine's error, coverage and its markers), so the decoder is the small part of the
Source Map v3 format they need: ``sources``, ``sourceRoot``, ``sourcesContent`` and the Base64 VLQ
``mappings``, and ``ignoreList`` (the sources a bundler marks as not the project's own, such as its
runtime from ``node_modules``); ``names`` and ``sections`` (index maps) are not read. A map is found
as the browsers find it: the file's last ``//# sourceMappingURL=`` comment (a relative path or a
``data:`` URL), else ``FILE.map`` beside the file. A map without ``sourcesContent`` is still used
for locations; the sources' text then comes from disk where the path resolves.
"""

from __future__ import annotations

import base64
import bisect
import json
import posixpath
import re
import urllib.parse
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

_BASE64 = {c: i for i, c in enumerate("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")}
_URL_COMMENT = re.compile(rb"//[#@]\s*sourceMappingURL=(\S+)\s*$")


class SourceMapError(ValueError):
    """A map that cannot be read; the message names the map."""


def decode_vlq(text: str) -> list[int]:
    """The signed integers of one Base64 VLQ segment (``"AAgBC"`` -> ``[0, 0, 16, 1]``)."""
    values, shift, value = [], 0, 0
    for char in text:
        digit = _BASE64.get(char)
        if digit is None:
            raise ValueError(f"{char!r} is not a Base64 VLQ digit")
        value += (digit & 31) << shift
        if digit & 32:
            shift += 5
            continue
        values.append(-(value >> 1) if value & 1 else value >> 1)
        shift = value = 0
    if shift:
        raise ValueError("a VLQ value is cut off")
    return values


@dataclass(frozen=True)
class Location:
    source: str  # as shown: relative to the project where it lies inside it
    line: int  # 1-based
    column: int  # 0-based, as in the map

    def __str__(self) -> str:
        return f"{self.source}:{self.line}"


class SourceMap:
    """One decoded map: generated (line, column) -> source location."""

    def __init__(self, data: dict, map_dir: str, base: Path | None) -> None:
        if data.get("version") != 3 or not isinstance(data.get("mappings"), str):
            raise ValueError("not a version 3 source map with mappings")
        root = data.get("sourceRoot") or ""
        self.sources = [_shown(posixpath.join(root, s) if root else s, map_dir, base) for s in data.get("sources", [])]
        contents = data.get("sourcesContent") or []
        self.contents: list[str | None] = [c if isinstance(c, str) else None for c in contents]
        self.contents += [None] * (len(self.sources) - len(self.contents))
        self.ignored = frozenset(i for i in data.get("ignoreList") or () if isinstance(i, int))
        self.ignored_names = frozenset(self.sources[i] for i in self.ignored if 0 <= i < len(self.sources))
        self.lines: list[list[tuple[int, int, int, int]]] = []  # per generated line: (col, source, line, col)
        source = line = column = 0
        for text in data["mappings"].split(";"):
            segments, generated = [], 0
            for part in filter(None, text.split(",")):
                fields = decode_vlq(part)
                generated += fields[0]
                if len(fields) >= 4:
                    source, line, column = source + fields[1], line + fields[2], column + fields[3]
                    segments.append((generated, source, line, column))
            segments.sort()
            self.lines.append(segments)

    @property
    def has_contents(self) -> bool:
        return bool(self.sources) and all(c is not None for c in self.contents)

    def original(self, line: int, column: int = 0) -> Location | None:
        """Where generated ``line`` (1-based), ``column`` (0-based) came from: the mapping at or
        before it on its line, else the first one after it on that line; None on a line the map
        says nothing of."""
        if not 1 <= line <= len(self.lines) or not self.lines[line - 1]:
            return None
        segments = self.lines[line - 1]
        at = bisect.bisect_right(segments, (column, float("inf"))) - 1
        _, source, src_line, src_col = segments[max(at, 0)]
        if not 0 <= source < len(self.sources):
            return None
        return Location(self.sources[source], src_line + 1, src_col)

    def source_line(self, location: Location) -> str | None:
        """The text of a source line, from ``sourcesContent``."""
        try:
            content = self.contents[self.sources.index(location.source)]
        except ValueError:
            return None
        if content is None:
            return None
        lines = content.splitlines()
        return lines[location.line - 1] if 0 < location.line <= len(lines) else None


def _shown(source: str, map_dir: str, base: Path | None) -> str:
    """A source path as a person opens it: relative to the project where it resolves inside it."""
    if "://" in source and not source.startswith("file://"):
        return source
    source = source.removeprefix("file://")
    joined = Path(posixpath.normpath((Path(map_dir, source) if not posixpath.isabs(source) else Path(source)).as_posix()))
    if base is not None and joined.is_file():
        try:
            return joined.relative_to(base).as_posix()
        except ValueError:
            pass
    # Not on disk from here (a copy of the tree elsewhere, such as the gate's unpacked artifact):
    # the path as the bundler wrote it, without the steps up to its project.
    parts = posixpath.normpath(source).split("/")
    while parts and parts[0] in ("..", "."):
        parts.pop(0)
    return "/".join(parts) or source


def map_of(file: Path, base: Path | None = None) -> SourceMap | None:
    """The map of a built file, or None when it has none; ``SourceMapError`` for one that is
    named but cannot be read. ``base``: the project root the sources are shown relative to."""
    return _map_of(Path(file).resolve(), base.resolve() if base is not None else None)


@lru_cache(maxsize=64)
def _map_of(file: Path, base: Path | None) -> SourceMap | None:
    try:
        data = file.read_bytes()
    except OSError:
        return None
    tail = data[-4096:].rstrip()
    found = _URL_COMMENT.search(tail.splitlines()[-1]) if tail else None
    where = f"{file.name}.map"
    try:
        if found is not None:
            url = found.group(1).decode("utf-8", "replace")
            if url.startswith("data:"):
                header, _, payload = url.partition(",")
                where = f"{file.name}'s inline map"
                text = base64.b64decode(payload) if header.endswith(";base64") else urllib.parse.unquote(payload).encode()
                return SourceMap(json.loads(text), str(file.parent), base)
            target = file.parent / urllib.parse.unquote(url)
            where = str(target.name)
        else:
            target = file.with_name(file.name + ".map")
            if not target.is_file():
                return None
        raw = json.loads(target.read_bytes())
        return SourceMap(raw, str(target.parent), base)
    except (OSError, ValueError, TypeError, KeyError) as exc:
        raise SourceMapError(f"{file.name}: its source map {where} cannot be read: {exc}") from None


def offset_position(text: str, offset: int) -> tuple[int, int]:
    """The 1-based line and 0-based column of a character offset in ``text``."""
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1)


def located(file: Path, line: int, column: int, base: Path | None) -> str | None:
    """``SOURCE:LINE`` for a place in a built file with a map, or None without one."""
    try:
        found = map_of(file, base)
    except SourceMapError:
        return None
    if found is None:
        return None
    location = found.original(line, column)
    return str(location) if location is not None else None
