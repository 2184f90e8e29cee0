"""The coverage documents of shards (`run --shard K/N --coverage`), joined into one run's.

Each shard's blocks are stretches between the places V8's ranges began or ended in that shard;
joined, the places of every shard cut the modules into the stretches one unsharded run would
know, and each stretch ran as often as the blocks holding it ran in the shards together. So
`gate --results` judges coverage the shards gathered, as it judges their verdicts.
"""

from __future__ import annotations

import bisect

from .blocks import CASES_PER_BLOCK
from .record import SCHEMA, meaningful, module_entry
from .sources import Function, Source, line_starts


class CoverageMergeError(Exception):
    """The documents are not shards of one run (other module bytes, another schema)."""


def merge(documents: list[dict]) -> dict:
    if not documents or any(d.get("schema") != SCHEMA for d in documents):
        raise CoverageMergeError(f"not coverage files of schema {SCHEMA} (written by `run --coverage`)")
    engines: dict[str, dict] = {}
    for document in documents:
        for name, info in document["engines"].items():
            into = engines.setdefault(name, {"status": "ok", "takes": 0, "rerun_takes": 0, "cases": 0})
            into["takes"] += info["takes"]
            into["rerun_takes"] += info["rerun_takes"]
            into["cases"] += info["cases"]
            if info["status"] != "ok":
                into["status"] = info["status"]
    modules = {}
    for path in sorted({p for d in documents for p in d["modules"]}):
        parts = [d["modules"][path] for d in documents if path in d["modules"]]
        if len({part["sha256"] for part in parts}) != 1:
            raise CoverageMergeError(f"{path}: the shards ran other bytes of it")
        modules[path] = _module(path, parts, sorted(engines))
    references = [d["reference"] for d in documents if d.get("reference")]
    return {"schema": SCHEMA, "engines": dict(sorted(engines.items())), "modules": modules,
            "reference": _reference(references) if references else None,
            "problems": sorted({p for d in documents for p in d.get("problems", [])})}


def _module(path: str, parts: list[dict], engines: list[str]) -> dict:
    text = parts[0]["source"]
    functions = tuple(Function(f["start"], f["end"], f["name"], f["line"]) for f in parts[0]["function_list"])
    source = Source(path, text, parts[0]["sha256"], line_starts(text), functions)
    places = sorted({p for part in parts for b in part["block_list"] for p in (b["start"], b["end"])})
    indexes = [([b["start"] for b in part["block_list"]], part["block_list"]) for part in parts]
    per_engine: dict[str, tuple[dict[tuple[int, int], int], dict[tuple[int, int], list[str]]]] = {
        name: ({}, {}) for name in engines}
    blocks = []
    for start, end in zip(places, places[1:]):
        holders = []
        for starts, rows in indexes:
            k = bisect.bisect_right(starts, start) - 1
            if k >= 0 and rows[k]["start"] <= start and end <= rows[k]["end"]:
                holders.append(rows[k])
        if not holders or not meaningful(source, (start, end)):
            continue  # between functions, or no code: no shard counted it
        blocks.append((start, end))
        cases: list[str] = []
        for row in holders:
            cases += [c for c in row["cases"] if c not in cases]
        for name in engines:
            totals, reached = per_engine[name]
            totals[(start, end)] = sum(row["count"].get(name, 0) for row in holders)
            reached[(start, end)] = cases[:CASES_PER_BLOCK]
    calls: dict[str, dict[tuple[int, int], int]] = {name: {} for name in engines}
    for part in parts:
        for f in part["function_list"]:
            for name, n in f["count"].items():
                key = (f["start"], f["end"])
                calls[name][key] = calls[name].get(key, 0) + n
    return module_entry(source, blocks, per_engine, calls)


def _reference(parts: list[dict]) -> dict:
    files = {}
    for name in sorted({n for part in parts for n in part["files"]}):
        given = [part["files"][name] for part in parts if name in part["files"]]
        missing_lines = set.intersection(*(set(f["missing_lines"]) for f in given))
        missing_branches = set.intersection(*({tuple(arc) for arc in f["missing_branches"]} for f in given))
        files[name] = {"statements": given[0]["statements"], "missing_lines": sorted(missing_lines),
                       "branches": given[0]["branches"], "branches_run": given[0]["branches"] - len(missing_branches),
                       "missing_branches": [list(arc) for arc in sorted(missing_branches)]}
    merged = {"engine": parts[0]["engine"], "files": files, "branches": sum(f["branches"] for f in files.values()),
              "branches_run": sum(f["branches_run"] for f in files.values())}
    problems = sorted({p["problem"] for p in parts if p.get("problem")})
    if problems:
        merged["problem"] = problems[0]
    return merged
