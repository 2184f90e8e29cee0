"""The corpus contract: JSON Lines, one case per line, checked strictly against the entries.

A case names an entry (`fn`) from the config; the entry says which case fields are its
arguments, so the harness has no built-in case kinds. A bad line is reported with file, line
and field and skipped; every other case still loads, so one typo never hides the rest of a
run. Groups are the file's path inside its corpus root without `.jsonl` (`parse/bare`), the
way JSONTestSuite names say what they test.

This module is the one place the schema lives: `extparity corpus lint`, the runner, the
pytest suite and the fixture generators' checker all load cases through `load_corpus`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from ..engines.base import WireCase
from ..project.config import CASE_KEYS, Entry
from ..project.errors import ConfigError
from ..project.words import count

ID_PATTERN = re.compile(r"[a-z0-9][a-z0-9._-]*\Z")
PARITY_ONLY = "reference"  # `"expect": "reference"`: the case asserts agreement, not a value
TAGS_FILE = "tags.json"
REGISTRY_FORMAT = ', a JSON object {"tag": "description", ...}'


@dataclass(frozen=True)
class Case:
    id: str
    fn: str
    fields: Mapping[str, Any]  # the entry's arguments, by name
    expect: dict | str  # a partial expectation, or PARITY_ONLY
    tags: tuple[str, ...]
    why: str
    file: str
    line: int
    group: str

    @property
    def input(self) -> Any:
        """The first argument: what reports show as the case's input."""
        return next(iter(self.fields.values()), None)

    def wire(self, entry: Entry) -> WireCase:
        return WireCase(self.id, self.fn, tuple(self.fields[name] for name in entry.args))

    def line_json(self) -> dict[str, Any]:
        """The case as a corpus line (for repro files and minimised fuzz cases)."""
        return {"id": self.id, "fn": self.fn, **self.fields, "expect": self.expect,
                "tags": list(self.tags), "why": self.why}


@dataclass(frozen=True)
class Problem:
    file: str
    line: int  # 0 when the problem is about the file or the corpus as a whole
    field: str
    message: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        if not where:  # about the config's reading of the corpus as a whole: the message names the key
            return self.message
        return f"{where}: field {self.field!r}: {self.message}" if self.field else f"{where}: {self.message}"


@dataclass
class Corpus:
    cases: list[Case] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    tags: dict[str, str] = field(default_factory=dict)
    files: list[str] = field(default_factory=list)


def _display(path: Path, base: Path) -> str:
    try:
        return path.resolve().relative_to(base).as_posix()
    except ValueError:
        return path.as_posix()


def corpus_root(path: Path) -> Path:
    """The folder a corpus path belongs to: itself for a folder; for a single file, the
    nearest folder above it holding the tag registry (so `parse/bare.jsonl` keeps its group)."""
    if path.is_dir():
        return path
    for folder in path.resolve().parents:
        if (folder / TAGS_FILE).is_file():
            return folder
    return path.parent


def corpus_files(root: Path) -> list[Path]:
    """Every *.jsonl below a folder, or the single file given."""
    return sorted(root.rglob("*.jsonl")) if root.is_dir() else [root]


def load_corpus(paths, entries: Mapping[str, Entry], base: Path | None = None) -> Corpus:
    """Load every case from `paths` (directories or .jsonl files), collecting problems."""
    base = (base or Path.cwd()).resolve()
    corpus = Corpus()
    owners: dict[str, str] = {}
    unregistered: set[str] = set()  # cases of a folder whose registry is missing or unusable
    fields: dict[tuple[str, int], tuple[str, frozenset[str]]] = {}  # (file, line) -> fn and the line's keys
    for root in map(Path, paths):
        if not root.exists():
            corpus.problems.append(Problem(_display(root, base), 0, "", "corpus path does not exist"))
            continue
        folder = corpus_root(root)
        registry = folder / TAGS_FILE
        unusable = _load_tags(registry, corpus)
        first = len(corpus.cases)
        for path in corpus_files(root):
            shown = _display(path, base)
            corpus.files.append(shown)
            group = path.resolve().relative_to(folder.resolve()).with_suffix("").as_posix()
            _load_file(path, shown, group, corpus, owners, entries, fields)
        if unusable:  # one line for the registry, not one per case and tag it would have declared
            used = sorted({tag for case in corpus.cases[first:] for tag in case.tags} - set(corpus.tags))
            unregistered.update(case.id for case in corpus.cases[first:])
            uses = f"; its cases use {len(used)} tags ({', '.join(used)})" if used else ""
            corpus.problems.append(Problem(_display(registry, base), 0, "", unusable + REGISTRY_FORMAT + uses))
    _args_unknown_to_the_corpus(corpus, entries, fields)
    for case in corpus.cases:
        for tag in case.tags:
            if tag not in corpus.tags and case.id not in unregistered:
                corpus.problems.append(Problem(case.file, case.line, "tags", f"unknown tag {tag!r} (declare it in {TAGS_FILE})"))
    return corpus


def _args_unknown_to_the_corpus(corpus: Corpus, entries: Mapping[str, Entry],
                                fields: dict[tuple[str, int], tuple[str, frozenset[str]]]) -> None:
    """An argument no line of its entry carries is the config's typo, not every line's: one
    problem naming ``[tool.extparity.entries.NAME].args`` (and the field the lines carry instead)
    replaces the two each line would have, the missing argument and the unknown field (a typo in
    ``args`` printed 168 lines for 84 cases)."""
    lines: dict[str, list[tuple[str, int]]] = {}
    for where, (fn, _) in fields.items():
        lines.setdefault(fn, []).append(where)
    blamed: dict[str, set[str]] = {}  # fn -> fields whose per-line problems the config's line replaces
    for fn, places in lines.items():
        keys = [fields[at][1] for at in places]
        absent = [arg for arg in entries[fn].args if not any(arg in k for k in keys)]
        if not absent:
            continue
        instead = sorted(set.intersection(*(set(k) - set(CASE_KEYS) - set(entries[fn].args) for k in keys)))
        carried = f"; they carry {', '.join(map(repr, instead))}, which args does not name" if instead else ""
        corpus.problems.append(Problem("", 0, "", f"[tool.extparity.entries.{fn}].args: "
                                       f"{', '.join(map(repr, absent))} is in no line of {fn} "
                                       f"({count(len(places), 'line')}){carried}: a typo in args?"))
        blamed[fn] = set(absent) | set(instead)
    if blamed:
        corpus.problems[:] = [problem for problem in corpus.problems
                              if not (problem.line and problem.field
                                      and problem.field in blamed.get(fields.get((problem.file, problem.line), ("",))[0], ()))]


def _load_tags(path: Path, corpus: Corpus) -> str | None:
    """Add the registry's tags to ``corpus``; or say why it cannot be used."""
    try:
        tags = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return "tag registry missing: every tag must be declared"
    except (OSError, ValueError) as error:
        return f"unreadable tag registry: {error}"
    if not isinstance(tags, dict) or not all(isinstance(v, str) and v for v in tags.values()):
        return "tag registry must map each tag to a description"
    corpus.tags.update(tags)
    return None


def _load_file(path: Path, shown: str, group: str, corpus: Corpus, owners: dict[str, str],
               entries: Mapping[str, Entry], fields: dict[tuple[str, int], tuple[str, frozenset[str]]]) -> None:
    try:
        data = path.read_bytes()
    except OSError as error:
        corpus.problems.append(Problem(shown, 0, "", f"unreadable: {error.strerror or error}"))
        return
    for number, raw in enumerate(data.split(b"\n"), start=1):
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as error:
            corpus.problems.append(Problem(shown, number, "", f"not UTF-8 (byte {error.start + 1} of the line)"))
            continue
        if not line.strip():
            continue
        try:
            record = json.loads(line, parse_constant=_reject_constant, object_pairs_hook=_reject_duplicates)
        except ValueError as error:
            corpus.problems.append(Problem(shown, number, "", f"not JSON: {error}"))
            continue
        if isinstance(record, dict) and isinstance(record.get("fn"), str) and record["fn"] in entries:
            fields[(shown, number)] = (record["fn"], frozenset(record))
        problems = check_record(record, entries)
        if problems:
            corpus.problems.extend(Problem(shown, number, key, message) for key, message in problems)
            continue
        if record["id"] in owners:
            corpus.problems.append(Problem(shown, number, "id", f"duplicate id {record['id']!r}, first at {owners[record['id']]}"))
            continue
        owners[record["id"]] = f"{shown}:{number}"
        entry = entries[record["fn"]]
        corpus.cases.append(Case(
            id=record["id"], fn=record["fn"], fields={name: record[name] for name in entry.args},
            expect=record["expect"], tags=tuple(record["tags"]), why=record["why"],
            file=shown, line=number, group=group,
        ))


def _reject_constant(name: str):
    """NaN and Infinity are Python extensions: JSON engines would refuse the whole batch."""
    raise ValueError(f"{name} is not JSON")


def _reject_duplicates(pairs):
    keys = [key for key, _ in pairs]
    duplicated = sorted({key for key in keys if keys.count(key) > 1})
    if duplicated:
        raise ValueError(f"duplicate key {duplicated[0]!r} (JSON engines disagree on which one wins)")
    return dict(pairs)


def check_expect(entry: Entry, expect: dict) -> list[str]:
    """Problems of an expectation against its entry, so matching can never crash on them."""
    problems = []
    for key, value in expect.items():
        if entry.expect_keys is not None and key not in entry.expect_keys:
            problems.append(f"unknown key {key!r} for {entry.name} (expected one of {', '.join(entry.expect_keys)})")
        elif key in entry.list_items:
            if not isinstance(value, list):
                problems.append(f"{key} must be a list")
                continue
            for index, item in enumerate(value):
                if not isinstance(item, (str, dict)):
                    problems.append(f"{key}[{index}] must be a string or an object")
    return problems


def check_record(record, entries: Mapping[str, Entry]) -> list[tuple[str, str]]:
    """Schema problems of one decoded line as (field, message) pairs."""
    if not isinstance(record, dict):
        return [("", "a case must be a JSON object")]
    case_id = record.get("id")
    problems = []
    if not isinstance(case_id, str) or not ID_PATTERN.match(case_id):
        problems.append(("id", "required: lowercase letters, digits, '.', '_' or '-'"))
    fn = record.get("fn")
    entry = entries.get(fn) if isinstance(fn, str) else None
    if entry is None:
        problems.append(("fn", f"required: one of {', '.join(entries)}"))
    else:
        problems += [(key, f"unknown field for {fn} (its arguments are {', '.join(entry.args)})")
                     for key in record if key not in CASE_KEYS and key not in entry.args]
        problems += [(name, f"required: argument of {fn}") for name in entry.args if name not in record]
    expect = record.get("expect")
    if expect == PARITY_ONLY:
        pass
    elif not isinstance(expect, dict) or not expect:
        problems.append(("expect", f'required: a non-empty object, or "{PARITY_ONLY}" for a parity-only case'))
    elif entry is not None:
        problems.extend(("expect", message) for message in check_expect(entry, expect))
    tags = record.get("tags")
    if not isinstance(tags, list) or not tags or not all(isinstance(tag, str) for tag in tags):
        problems.append(("tags", "required: a non-empty list of strings"))
    why = record.get("why")
    if not isinstance(why, str) or not why.strip() or "\n" in why:
        problems.append(("why", "required: one line saying why the case exists"))
    return problems
