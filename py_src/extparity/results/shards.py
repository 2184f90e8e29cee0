"""Splitting a run across machines, and putting the pieces back together.

`extparity run --shard K/N` keeps the cases whose id hashes to K of N: a stable partition (a
case stays in its shard when others are added), so a CI matrix of N jobs covers every case once.
`extparity merge` joins the shards' JSON results into the document one unsharded run would have
written, byte for byte: cases in corpus order, summary and verdict recomputed from the cells.
Shards that disagree on anything but their cases (engines, versions, module hashes, corpus
files) cannot be merged: that is reported, never papered over.
"""

from __future__ import annotations

import hashlib
import heapq
import re
from pathlib import Path
from typing import Callable, Iterable, Iterator

from .build import SummaryCounts, document_ok
from .read import engine_names, open_cases, read_head

SHARD = re.compile(r"([1-9][0-9]*)/([1-9][0-9]*)\Z")
SHARED_KEYS = ("extparity", "schema", "reference", "entries", "modules", "known_deviation_problems", "problems")


class MergeError(Exception):
    """Shard results that do not come from one run configuration."""


def parse_shard(text: str) -> tuple[int, int]:
    match = SHARD.match(text.strip())
    if not match or not 1 <= int(match.group(1)) <= int(match.group(2)):
        raise ValueError(f"--shard {text!r}: expected K/N with 1 <= K <= N, e.g. 2/4")
    return int(match.group(1)), int(match.group(2))


def in_shard(case_id: str, shard: tuple[int, int]) -> bool:
    index, count = shard
    return int.from_bytes(hashlib.sha256(case_id.encode("utf-8")).digest()[:8], "big") % count == index - 1


def merge(documents: list[dict]) -> dict:
    """One JSON result from the results of the shards of one run, all in memory."""
    heads = [{key: value for key, value in document.items() if key != "cases"} for document in documents]
    merged = merged_head(heads, [document["cases"] for document in documents])
    merged["cases"] = list(merged_cases([iter(document["cases"]) for document in documents], merged["corpus"]["files"]))
    return merged


def merge_files(paths: list[Path]) -> dict:
    """``merge`` of shard result files, read twice a case at a time (``read.open_cases``): once
    for the ids, counts and verdict-free checks, once more as ``cases`` (an iterator) is
    written. Memory is one case per shard, not every shard's document: 8 shards of 93,600
    cases merged in memory held about a gigabyte."""
    heads = [read_head(path) for path in paths]
    merged = merged_head(heads, [open_cases(path) for path in paths])
    merged["cases"] = merged_cases([open_cases(path) for path in paths], merged["corpus"]["files"])
    return merged


def merged_head(heads: list[dict], cases: list[Iterable[dict]]) -> dict:
    """Everything of the merged result but its cases: checked that the shards come from one run,
    that no case is in two of them and that each is in corpus order, and counted."""
    if not heads:
        raise MergeError("nothing to merge")
    first = heads[0]
    for index, document in enumerate(heads[1:], start=2):
        for key in SHARED_KEYS:
            if document.get(key) != first.get(key):
                raise MergeError(f"result {index} differs from result 1 in {key!r}: not shards of one run")
        if document["corpus"]["files"] != first["corpus"]["files"] or document["corpus"]["problems"] != first["corpus"]["problems"]:
            raise MergeError(f"result {index} was run on another corpus than result 1")
        if list(document["engines"]) != list(first["engines"]):
            raise MergeError(f"result {index} ran engines {', '.join(document['engines'])}, result 1 ran {', '.join(first['engines'])}")
        for name, engine in document["engines"].items():
            for key in ("kind", "tree", "versions", "module_hashes"):
                if engine[key] != first["engines"][name][key] and engine["status"] == first["engines"][name]["status"] == "ok":
                    raise MergeError(f"result {index}: engine {name} differs in {key!r} from result 1")
    engines = {}
    for name in engine_names(first):  # run order: the summary keeps it, the JSON "engines" object is sorted
        failed = next((d["engines"][name] for d in heads if d["engines"][name]["status"] != "ok"), None)
        engines[name] = failed or first["engines"][name]
    order = _order(first["corpus"]["files"])
    seen: dict[str, int] = {}
    counts = SummaryCounts(list(engines), first["reference"])
    for index, shard in enumerate(cases, start=1):
        previous = None
        for case in shard:
            if case["id"] in seen:
                raise MergeError(f"case {case['id']!r} is in result {seen[case['id']]} and in result {index}")
            seen[case["id"]] = index
            place = order(case)
            if previous is not None and place < previous:
                raise MergeError(f"result {index} is not in corpus order at case {case['id']!r} "
                                 f"(`run --shard` writes its cases in corpus order)")
            previous = place
            counts.add(case["cells"])
    merged = {key: first[key] for key in SHARED_KEYS}
    statuses = {name: engine["status"] for name, engine in engines.items()}
    merged.update(corpus={**first["corpus"], "cases": len(seen)}, engines=engines,
                  summary=counts.rows(statuses))
    merged["ok"] = document_ok(merged, cells=counts.cell_rows())
    return merged


def merged_cases(shards: list[Iterator[dict]], files: list[str]) -> Iterator[dict]:
    """The shards' cases in corpus order; each shard is in that order already (``merged_head``
    checked it), so this interleaves them without holding more than one case of each."""
    return heapq.merge(*shards, key=_order(files))


def _order(files: list[str]) -> Callable[[dict], tuple[int, int]]:
    position = {name: index for index, name in enumerate(files)}
    return lambda case: (position.get(case["file"], len(position)), case["line"])
