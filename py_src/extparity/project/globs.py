"""Glob patterns in the config's path lists: names that change at every build.

Why: bundlers name chunks by their content (`chunks/popup-v7w0ZTp-.js`), so a `glue` or
`glue_scripts` list of literal paths breaks at every build. A pattern is matched against each
build's files instead, and what it matched is reported, so a reviewer still sees the files a
declaration covers; a pattern that matches nothing is stale, as a literal path to a missing file
is. The syntax is the shell's, on tree-relative POSIX paths: `*` and `?` stay within a folder,
`**` spans folders (`**/x.js` is also `x.js`), `[abc]` and `[!abc]` are classes. A path without
`*`, `?` or `[` matches only itself, so every literal list keeps its meaning.

This is the one matcher of config paths: every check that reads a declared path calls it.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Iterable

PATTERN_CHARACTERS = frozenset("*?[")
SHOWN = 3  # matches named on a line before "and N more"


def is_pattern(text: str) -> bool:
    return not PATTERN_CHARACTERS.isdisjoint(text)


@lru_cache(maxsize=512)
def _compiled(pattern: str) -> re.Pattern[str]:
    out, at = [], 0
    while at < len(pattern):
        char = pattern[at]
        if pattern.startswith("**/", at):
            out.append("(?:[^/]*/)*")
            at += 3
        elif pattern.startswith("**", at):
            out.append(".*")
            at += 2
        elif char == "*":
            out.append("[^/]*")
            at += 1
        elif char == "?":
            out.append("[^/]")
            at += 1
        elif char == "[" and (end := pattern.find("]", at + 2 if pattern[at + 1:at + 2] in "!^" else at + 1)) > at:
            body = pattern[at + 1:end]
            negated = body[:1] in ("!", "^")
            body = re.escape(body[1:] if negated else body).replace("\\-", "-")
            out.append(f"[^/{body}]" if negated else f"[{body}]")
            at = end + 1
        else:
            out.append(re.escape(char))
            at += 1
    return re.compile("".join(out) + r"\Z")


def matches(pattern: str, path: str) -> bool:
    """Whether the tree-relative ``path`` is one ``pattern`` names (itself, for a literal path)."""
    return pattern == path if not is_pattern(pattern) else bool(_compiled(pattern).match(path))


def covered(path: str, patterns: Iterable[str]) -> bool:
    return any(matches(pattern, path) for pattern in patterns)


def expand(patterns: Iterable[str], paths: Iterable[str]) -> dict[str, list[str]]:
    """Each pattern -> the paths it matches, sorted (empty: stale)."""
    paths = sorted(set(paths))
    return {pattern: [path for path in paths if matches(pattern, path)] for pattern in patterns}


def described(pattern: str, found: list[str]) -> str:
    """A pattern as a line reports it: a literal path as itself, a pattern with what it matched."""
    if not is_pattern(pattern):
        return pattern
    if not found:
        return f"{pattern} (matched nothing)"
    more = f" and {len(found) - SHOWN} more" if len(found) > SHOWN else ""
    return f"{pattern} (matched {', '.join(found[:SHOWN])}{more})"
