"""Two verdicts, aligned line by line so a person sees what differs.

Canonical verdicts are one line of JSON, which a line diff cannot explain. ``lines`` breaks a
verdict after each ``{``, ``[`` and ``,`` outside strings, without parsing it: every byte is
shown as it was (reparsing would hide the very differences a parity run finds, such as
``1e-7`` against ``1e-07``). The HTML report, JUnit failures and `extparity diff` all show
diffs made here.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from itertools import zip_longest

INDENT = "  "


def lines(text: str) -> list[str]:
    """``text`` broken into indented lines at JSON structure; strings are never split, and a
    short list of plain values (a span, an allowlist) stays on one line."""
    out: list[str] = []
    current: list[str] = []
    depth, index = 0, 0

    def flush() -> None:
        if current:
            out.append(INDENT * depth + "".join(current))
            current.clear()

    while index < len(text):
        char = text[index]
        if char == '"':
            end = _string_end(text, index)
            current.append(text[index:end])
            index = end
            continue
        if char == "[" and (flat := _flat_list_end(text, index)) is not None:
            current.append(text[index:flat])
            index = flat
            continue
        if char in "{[":
            current.append(char)
            if text[index + 1:index + 2] == ("}" if char == "{" else "]"):
                current.append(text[index + 1])
                index += 2
                continue
            flush()
            depth += 1
        elif char in "}]":
            flush()
            depth = max(0, depth - 1)
            current.append(char)
        elif char == ",":
            current.append(char)
            flush()
        elif char == "\n":
            flush()
        else:
            current.append(char)
        index += 1
    flush()
    return out or [""]


def _string_end(text: str, start: int) -> int:
    """Index just past the string literal opening at ``start`` (or the end of an unclosed one)."""
    index = start + 1
    while index < len(text):
        if text[index] == "\\":
            index += 2
            continue
        if text[index] == '"':
            return index + 1
        index += 1
    return len(text)


def _flat_list_end(text: str, start: int, limit: int = 60) -> int | None:
    """Index just past a list of plain values opening at ``start``, if it is short."""
    index = start + 1
    while index < len(text) and index - start <= limit:
        char = text[index]
        if char == '"':
            index = _string_end(text, index)
            continue
        if char in "{[":
            return None
        if char == "]":
            return index + 1
        index += 1
    return None


@dataclass(frozen=True)
class Row:
    """One aligned row: ``op`` is "same", "changed" (left and right both set), "removed" (left
    only) or "added" (right only)."""

    op: str
    left: str | None
    right: str | None


def aligned(left: str, right: str) -> list[Row]:
    """The two verdicts' lines side by side, changed lines paired up where they can be."""
    a, b = lines(left), lines(right)
    rows: list[Row] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            rows += [Row("same", line, line) for line in a[i1:i2]]
            continue
        olds, news = a[i1:i2], b[j1:j2]
        paired = min(len(olds), len(news))
        rows += [Row("changed", olds[k], news[k]) for k in range(paired)]
        rows += [Row("removed", line, None) for line in olds[paired:]]
        rows += [Row("added", None, line) for line in news[paired:]]
    return rows


def unified(left: str, right: str, left_name: str, right_name: str, context: int = 3) -> str:
    """A unified diff of the two verdicts' lines (JUnit failures, plain text)."""
    return "\n".join(difflib.unified_diff(lines(left), lines(right), left_name, right_name, n=context, lineterm=""))


def side_by_side(left: str, right: str, width: int, context: int | None = 3) -> list[str]:
    """Two columns of ``width`` characters each (longer lines wrap), a mark between them ('|'
    changed, '<' only left, '>' only right); equal lines further than ``context`` from a
    change are elided."""
    rows = aligned(left, right)
    keep = [True] * len(rows)
    if context is not None:
        near = [False] * len(rows)
        for index, row in enumerate(rows):
            if row.op != "same":
                for k in range(max(0, index - context), min(len(rows), index + context + 1)):
                    near[k] = True
        keep = near
    out, skipped = [], 0
    mark = {"same": " ", "changed": "|", "removed": "<", "added": ">"}
    for row, shown in zip(rows, keep):
        if not shown:
            skipped += 1
            continue
        if skipped:
            out.append(f"... {skipped} equal lines ...")
            skipped = 0
        lefts, rights = _wrap(row.left or "", width), _wrap(row.right or "", width)
        for part_left, part_right in zip_longest(lefts, rights, fillvalue=""):
            out.append(f"{part_left.ljust(width)} {mark[row.op]} {part_right}".rstrip())
    if skipped:
        out.append(f"... {skipped} equal lines ...")
    return out


def _wrap(text: str, width: int) -> list[str]:
    """Long lines continue on the next row: a side-by-side view never hides a difference."""
    return [text[i:i + width] for i in range(0, len(text), width)] or [""]
