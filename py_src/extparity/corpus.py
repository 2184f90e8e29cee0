"""Loading the fixture corpus: JSON Lines, one case per line, checked strictly.

A bad line is reported with file, line and field and skipped; every other case still loads,
so one typo never hides the rest of a run. Groups are the file's path inside its corpus root
without `.jsonl` (`parse/bare`), the way JSONTestSuite names say what they test.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ID_PATTERN = re.compile(r"[a-z0-9][a-z0-9._-]*\Z")
FN_KINDS = ("parse", "repair")
KEYS = ("id", "fn", "input", "allowed", "expect", "tags", "why")
EXPECT_KEYS = {
    "parse": ("calls", "rejected", "error"),
    "repair": ("status", "arguments", "reason", "actions"),
}
TAGS_FILE = "tags.json"


@dataclass(frozen=True)
class Case:
    id: str
    fn: str
    input: Any
    allowed: Any
    expect: dict
    tags: tuple[str, ...]
    why: str
    file: str
    line: int
    group: str

    def wire(self) -> dict[str, Any]:
        """What engines receive: nothing about expectations, so no engine can peek."""
        wire = {"id": self.id, "fn": self.fn, "input": self.input}
        if self.fn == "parse":
            wire["allowed"] = self.allowed
        return wire


@dataclass(frozen=True)
class Problem:
    file: str
    line: int  # 0 when the problem is about the file or the corpus as a whole
    field: str
    message: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
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


def load_corpus(paths, base: Path | None = None) -> Corpus:
    """Load every case from `paths` (directories or .jsonl files), collecting problems."""
    base = (base or Path.cwd()).resolve()
    corpus = Corpus()
    owners: dict[str, str] = {}
    for root in map(Path, paths):
        if not root.exists():
            corpus.problems.append(Problem(_display(root, base), 0, "", "corpus path does not exist"))
            continue
        folder = corpus_root(root)
        _load_tags(folder / TAGS_FILE, corpus, base)
        for path in corpus_files(root):
            shown = _display(path, base)
            corpus.files.append(shown)
            group = path.resolve().relative_to(folder.resolve()).with_suffix("").as_posix()
            _load_file(path, shown, group, corpus, owners)
    for case in corpus.cases:
        for tag in case.tags:
            if tag not in corpus.tags:
                corpus.problems.append(Problem(case.file, case.line, "tags", f"unknown tag {tag!r} (declare it in {TAGS_FILE})"))
    return corpus


def _load_tags(path: Path, corpus: Corpus, base: Path) -> None:
    shown = _display(path, base)
    try:
        tags = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        corpus.problems.append(Problem(shown, 0, "", "tag registry missing: every tag must be declared"))
        return
    except (OSError, ValueError) as error:
        corpus.problems.append(Problem(shown, 0, "", f"unreadable tag registry: {error}"))
        return
    if not isinstance(tags, dict) or not all(isinstance(v, str) and v for v in tags.values()):
        corpus.problems.append(Problem(shown, 0, "", "tag registry must map each tag to a description"))
        return
    corpus.tags.update(tags)


def _load_file(path: Path, shown: str, group: str, corpus: Corpus, owners: dict[str, str]) -> None:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        corpus.problems.append(Problem(shown, 0, "", f"unreadable: {error}"))
        return
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line, parse_constant=_reject_constant, object_pairs_hook=_reject_duplicates)
        except ValueError as error:
            corpus.problems.append(Problem(shown, number, "", f"not JSON: {error}"))
            continue
        problems = check_record(record)
        if problems:
            corpus.problems.extend(Problem(shown, number, key, message) for key, message in problems)
            continue
        where = f"{shown}:{number}"
        if record["id"] in owners:
            corpus.problems.append(Problem(shown, number, "id", f"duplicate id {record['id']!r}, first at {owners[record['id']]}"))
            continue
        owners[record["id"]] = where
        corpus.cases.append(
            Case(
                id=record["id"],
                fn=record["fn"],
                input=record["input"],
                allowed=record.get("allowed"),
                expect=record["expect"],
                tags=tuple(record["tags"]),
                why=record["why"],
                file=shown,
                line=number,
                group=group,
            )
        )


def _reject_constant(name: str):
    """NaN and Infinity are Python extensions: JSON engines would refuse the whole batch."""
    raise ValueError(f"{name} is not JSON")


def _reject_duplicates(pairs):
    keys = [key for key, _ in pairs]
    duplicated = sorted({key for key in keys if keys.count(key) > 1})
    if duplicated:
        raise ValueError(f"duplicate key {duplicated[0]!r} (JSON engines disagree on which one wins)")
    return dict(pairs)


def check_expect(fn: str, expect: dict) -> list[str]:
    """Type problems of an expectation's values, so matching can never crash on them."""
    problems = []
    for key, value in expect.items():
        if fn == "parse" and key in ("calls", "rejected"):
            item_keys = ("name", "arguments", "format", "span") if key == "calls" else ("reason", "format", "name", "span")
            if not isinstance(value, list):
                problems.append(f"{key} must be a list")
                continue
            for index, item in enumerate(value):
                if isinstance(item, dict):
                    problems.extend(f"{key}[{index}]: unknown key {k!r}" for k in item if k not in item_keys)
                elif not isinstance(item, str):
                    problems.append(f"{key}[{index}] must be a string or an object")
        elif key in ("error", "reason") and not (value is None or isinstance(value, str)):
            problems.append(f"{key} must be a string or null")
        elif key == "status" and value not in ("valid", "repaired", "rejected"):
            problems.append("status must be valid, repaired or rejected")
        elif key == "arguments" and not (value is None or isinstance(value, dict)):
            problems.append("arguments must be an object or null")
        elif key == "actions" and not isinstance(value, list):
            problems.append("actions must be a list")
    return problems


def check_record(record) -> list[tuple[str, str]]:
    """Schema problems of one decoded line as (field, message) pairs."""
    if not isinstance(record, dict):
        return [("", "a case must be a JSON object")]
    problems = [(key, "unknown field") for key in record if key not in KEYS]
    case_id = record.get("id")
    if not isinstance(case_id, str) or not ID_PATTERN.match(case_id):
        problems.append(("id", "required: lowercase letters, digits, '.', '_' or '-'"))
    fn = record.get("fn")
    if not isinstance(fn, str) or fn not in FN_KINDS:
        fn = None
        problems.append(("fn", f"required: one of {', '.join(FN_KINDS)}"))
    if "input" not in record:
        problems.append(("input", "required"))
    if fn == "parse" and "allowed" not in record:
        problems.append(("allowed", "required for parse cases"))
    if fn == "repair" and "allowed" in record:
        problems.append(("allowed", "not used by repair cases"))
    expect = record.get("expect")
    if not isinstance(expect, dict) or not expect:
        problems.append(("expect", "required: a non-empty object"))
    elif fn is not None:
        problems.extend(("expect", f"unknown key {key!r} for {fn}") for key in expect if key not in EXPECT_KEYS[fn])
        problems.extend(("expect", message) for message in check_expect(fn, expect))
    tags = record.get("tags")
    if not isinstance(tags, list) or not tags or not all(isinstance(tag, str) for tag in tags):
        problems.append(("tags", "required: a non-empty list of strings"))
    why = record.get("why")
    if not isinstance(why, str) or not why.strip():
        problems.append(("why", "required: one line saying why the case exists"))
    return problems
