"""Known deviations: data, never code (wptrunner's expectation files).

Each entry names a case, the engines that deviate on it, a reason and an http(s) link. The
judge turns a failing cell they cover into "known"; a covered cell that passes is stale. An
entry may also pin the deviating verdicts (``verdicts``: engine -> SHA-256 of its verdict text);
the release gate requires them, so a deviating case whose bytes change fails instead of staying
"known". A fuzz campaign accepts generated cases that show the entry's quirk and nothing else
(``fuzz.quirks``); ``"fuzz": "numbers"`` widens the quirk to any number changed into another. The same file format acknowledges new calls in ``extparity compare --fail-on-new-calls``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

LINK = re.compile(r"https?://\S+\Z")
SHA256 = re.compile(r"[0-9a-f]{64}\Z")
NUMBERS = "numbers"  # a fuzz scope: any number changed into another is the quirk
FUZZ_SCOPES = (NUMBERS,)


@dataclass(frozen=True)
class Deviation:
    case: str
    engines: tuple[str, ...]
    reason: str
    link: str
    verdicts: dict[str, str] = field(default_factory=dict)  # engine -> SHA-256 of its deviating verdict
    fuzz: str | None = None  # "numbers": in a fuzz campaign, any number changed into another is this quirk


def load_deviations(path: Path | None, engines: Iterable[str], case_ids: set[str] | None,
                    selected: Iterable[str] = ()) -> tuple[dict[str, Deviation], list[str]]:
    """Known deviations and the problems of the file. An entry must name a configured engine
    and, when ``case_ids`` is given, a case of the corpus; it needs a reason and an http(s) link.
    Entries whose engines are all outside ``selected`` are kept out of this run's judgement."""
    if path is None:
        return {}, []
    name = path.name
    if not path.exists():  # a typo must not read as "no deviations"
        return {}, [f"{name}: the configured known-deviations file does not exist ({path})"]
    try:
        entries = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as error:
        return {}, [f"{name}: not JSON: {error}"]
    engines, selected = set(engines), set(selected)
    deviations, problems = {}, []
    for index, entry in enumerate(entries if isinstance(entries, list) else [None]):
        where = f"{name}[{index}]"
        if not (isinstance(entry, dict) and all(isinstance(entry.get(k), str) and entry[k].strip() for k in ("case", "reason", "link"))
                and isinstance(entry.get("engines"), list) and entry["engines"]):
            problems.append(f"{where}: needs case, engines (a non-empty list), reason and link")
            continue
        unknown = [e for e in entry["engines"] if e not in engines]
        if unknown:
            problems.append(f"{where}: engine {', '.join(map(str, unknown))} is not configured")
        elif not LINK.match(entry["link"]):
            problems.append(f"{where}: link must be an http(s) URL, got {entry['link']!r}")
        elif case_ids is not None and entry["case"] not in case_ids:
            problems.append(f"{where}: no case {entry['case']!r} in the corpus")
        elif entry["case"] in deviations:
            problems.append(f"{where}: a second entry for {entry['case']!r}; list every engine in one entry")
        elif (problem := _verdicts_problem(entry)) is not None:
            problems.append(f"{where}: {problem}")
        elif not selected or selected & set(entry["engines"]):
            deviations[entry["case"]] = Deviation(entry["case"], tuple(entry["engines"]), entry["reason"], entry["link"],
                                                  dict(entry.get("verdicts", {})), entry.get("fuzz"))
    return deviations, problems


def _verdicts_problem(entry: dict) -> str | None:
    """``verdicts``, when present, maps engines of the entry to SHA-256 hex digests."""
    if entry.get("fuzz", FUZZ_SCOPES[0]) not in FUZZ_SCOPES:
        return f"fuzz must be {FUZZ_SCOPES[0]!r} (or left out: generated cases with the very same difference)"
    pinned = entry.get("verdicts", {})
    if not isinstance(pinned, dict):
        return "verdicts must map engines to SHA-256 hex digests"
    for engine, digest in pinned.items():
        if engine not in entry["engines"]:
            return f"verdicts names {engine}, which is not one of the entry's engines"
        if not (isinstance(digest, str) and SHA256.match(digest)):
            return f"verdicts.{engine} must be a SHA-256 hex digest (64 lowercase hex digits)"
    return None
