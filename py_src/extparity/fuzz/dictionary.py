"""The splice dictionary: the values the scripts on the verdict path compare their input against,
which the ``dictionary`` generator and ``--guided`` splice into inputs.

Why every script on the verdict path and not the verified modules alone: a verdict reaches the
caller through the background script (its message handler) and, in the gate, through the message
adapters, and either may treat an input specially, say one holding two U+2063 INVISIBLE
SEPARATORs, which no corpus case and no hazard table holds. What such a rule keys on is a literal
of the script that holds it, so the literals of every tree's verified modules, every tree's
background scripts (the manifest's service worker or scripts and what they import) and the
message adapters are the words. The trees may differ (per-browser modules, the background), so
each tree is read.

What counts as a literal: strings, the pieces of template literals between substitutions, the
literal runs and class members of regular expressions, with escapes decoded as JS decodes them,
and hex number literals read as the character they name (``0x7b``, as code written against
``charCodeAt`` compares). The syntax is tree-sitter's (``subject.linker``); only the inside of a
string's escape and a regex pattern is read here.

A script that cannot be read or parsed adds nothing: the engines, the trees check and the scripts
check each report it, and the dictionary only makes inputs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping

from ..project.config import Project
from ..project.manifest import load_manifest
from ..subject.js_strings import ESCAPE, paired, pieces, unescape
from ..subject.linker import LinkError, parse_source, parsed_modules, walk
from ..subject.tree_checks import background_closure

MAX_WORD_UNITS = 64  # longer literals are messages, not values an input is compared against
SOURCES = ("verified", "background", "adapters")  # a word is counted under the first that holds it
IMPORTING = frozenset({"import_statement", "export_statement"})
QUANTIFIER = re.compile(r"[*+?]|\{\d+(?:,\d*)?\}")
REGEX_CLASS_ESCAPES = frozenset("dDwWsSbBpPk123456789c")  # a class, an assertion or a reference: no literal


@dataclass(frozen=True)
class Dictionary:
    words: tuple[str, ...]  # sorted, each once
    by_source: Mapping[str, int]  # how many words each source brought that an earlier one did not

    def summary(self) -> str:
        return (f"dictionary {len(self.words):,} words ("
                + ", ".join(f"{self.by_source.get(source, 0):,} {source}" for source in SOURCES) + ")")


def splice_dictionary(project: Project) -> Dictionary:
    """The literals of every script on ``project``'s verdict path, in every tree."""
    found: dict[str, set[str]] = {source: set() for source in SOURCES}
    entries = sorted({entry.module for entry in project.entries.values()})
    for name, root in sorted(project.trees.items()):
        verified: set[str] = set()
        try:
            for path, tree, source in parsed_modules(root, entries):
                verified.add(path)
                found["verified"] |= script_literals(tree, source)
        except LinkError:
            pass
        manifest, _ = load_manifest(name, root)
        try:
            background = background_closure(root, manifest) if manifest is not None else []
        except LinkError:
            background = []
        for path in background:
            if path not in verified:
                found["background"] |= file_literals(root / path)
    for adapter in sorted(project.gate.messages.values()):
        found["adapters"] |= file_literals(adapter)
    seen: set[str] = set()
    by_source: dict[str, int] = {}
    for origin in SOURCES:
        by_source[origin] = len(found[origin] - seen)
        seen |= found[origin]
    return Dictionary(tuple(sorted(seen)), by_source)


def unseen(words: Iterable[str], seeds: Iterable[Mapping[str, Any]]) -> tuple[str, ...]:
    """The words no seed's string fields hold: the comparisons the corpus never made true, where a
    spliced word is most likely to take a branch no case took."""
    corpus = "\0".join(value for fields in seeds for value in fields.values() if isinstance(value, str))
    return tuple(word for word in words if word not in corpus)


def file_literals(path: Path) -> set[str]:
    try:
        tree, source = parse_source(path.read_bytes(), str(path))
    except (OSError, LinkError):
        return set()
    return script_literals(tree, source)


def script_literals(tree, source: bytes) -> set[str]:
    """The words of one parsed script (a tree-sitter tree and the bytes it was parsed from)."""
    found: set[str] = set()
    for node in walk(tree.root_node):
        if node.type == "string" and node.parent is not None and node.parent.type in IMPORTING:
            continue  # a module specifier: nothing the code compares its input against
        if node.type in ("string", "template_string"):
            found.update(pieces(node, source))
        elif node.type == "regex_pattern":
            found.update(regex_literals(_text(node, source)))
        elif node.type == "number" and _text(node, source).lower().startswith("0x"):
            code = int(_text(node, source).rstrip("n").replace("_", ""), 16)  # BigInt, separators
            if code < 0x110000:
                found.add(chr(code))
    return {word for word in found if 0 < _units(word) <= MAX_WORD_UNITS}


def regex_literals(pattern: str) -> list[str]:
    """The runs of a regex pattern that match only themselves, and each member of its classes:
    ``a\\u2063\\u2063b|c[\\u2028x]`` gives ``a\\u2063\\u2063b``, ``c``, ``\\u2028`` and ``x``."""
    words: list[str] = []
    run: list[str] = []

    def cut() -> None:
        if run:
            words.append(paired("".join(run)))
            run.clear()

    at = 0
    while at < len(pattern):
        char = pattern[at]
        if char == "\\":
            match = ESCAPE.match(pattern, at)
            if match is None or pattern[at + 1:at + 2] in REGEX_CLASS_ESCAPES:
                cut()
                at += 2
                continue
            run.append(unescape(match.group()))
            at = match.end()
        elif char == "[":
            cut()
            end, members = _class_members(pattern, at + 1)
            words.extend(members)
            at = end
        elif (quantifier := QUANTIFIER.match(pattern, at)) is not None:
            cut()  # the run so far, its last unit once: a quantified unit is there at least once or never
            at = quantifier.end() + (pattern[quantifier.end():quantifier.end() + 1] == "?")
        elif char in "()|^$.":
            cut()
            at += 1
            if char == "(" and pattern.startswith("?", at):  # (?: (?= (?! (?<= (?<! (?<name>
                group = re.match(r"\?(?:[:=!]|<[=!]|<[^>]*>)", pattern[at:])
                at += group.end() if group else 1
        else:
            run.append(char)
            at += 1
    cut()
    return words


def _class_members(pattern: str, at: int) -> tuple[int, list[str]]:
    """From just after a ``[``: where the class ends and its literal members (a range's ends)."""
    members: list[str] = []
    if pattern.startswith("^", at):
        at += 1
    while at < len(pattern) and pattern[at] != "]":
        if pattern[at] == "\\":
            match = ESCAPE.match(pattern, at)
            if match is not None and pattern[at + 1:at + 2] not in REGEX_CLASS_ESCAPES:
                members.append(unescape(match.group()))
                at = match.end()
            else:
                at += 2
        else:
            if pattern[at] != "-":
                members.append(pattern[at])
            at += 1
    return at + 1, members


def _units(text: str) -> int:
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def _text(node, source: bytes) -> str:
    return source[node.start_byte:node.end_byte].decode("utf-8")
