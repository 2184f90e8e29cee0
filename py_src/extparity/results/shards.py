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
import re

from .build import document_ok, summary_of
from .read import engine_names

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
    """One JSON result from the results of the shards of one run."""
    if not documents:
        raise MergeError("nothing to merge")
    first = documents[0]
    for index, document in enumerate(documents[1:], start=2):
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
    seen: dict[str, int] = {}
    cases = []
    for index, document in enumerate(documents, start=1):
        for case in document["cases"]:
            if case["id"] in seen:
                raise MergeError(f"case {case['id']!r} is in result {seen[case['id']]} and in result {index}")
            seen[case["id"]] = index
            cases.append(case)
    order = {name: position for position, name in enumerate(first["corpus"]["files"])}
    cases.sort(key=lambda case: (order.get(case["file"], len(order)), case["line"]))
    engines = {}
    for name in engine_names(first):  # run order: the summary keeps it, the JSON "engines" object is sorted
        failed = next((d["engines"][name] for d in documents if d["engines"][name]["status"] != "ok"), None)
        engines[name] = failed or first["engines"][name]
    merged = {key: first[key] for key in SHARED_KEYS}
    merged.update(
        corpus={**first["corpus"], "cases": len(cases)},
        engines=engines,
        cases=cases,
        summary=summary_of(list(engines), first["reference"], {n: e["status"] for n, e in engines.items()},
                           [case["cells"] for case in cases]),
    )
    merged["ok"] = document_ok(merged)
    return merged
