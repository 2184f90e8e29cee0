"""From V8's coverage ranges to blocks: what ran, how often, and which cases reach each block.

V8's precise block coverage (``Profiler.takePreciseCoverage`` with ``detailed``) reports, per
function, its range and the nested ranges whose count differs from the range around them;
ranges with equal counts are merged away, so the set of ranges depends on what ran. A block
here is every distinct range any take reported, plus every function of the source (see
``sources``): its count in a take is that of the innermost range of the take that holds it,
which is exactly V8's meaning of a merged range. Takes of one case name the cases that reach a
block; the block's total is summed over the takes of whole batches, each case counted once.

The module's own top-level code runs once at import, before coverage starts and before any
case: its function (the whole script) is left out, and so are blocks outside every function.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .sources import Source

Range = tuple[int, int]  # [start, end) in UTF-16 units
CASES_PER_BLOCK = 3  # the ids kept per block: enough to open one, few enough to stay cheap


@dataclass
class Take:
    """One ``takePreciseCoverage`` of one engine: module -> ``(start, end, count)`` ranges, and
    ``functions``: module -> ``(start, end, count)`` of each function's own range. ``cases``
    are the cases run since the previous take; ``counts`` says whether the take adds to the
    totals (a batch) or only names cases (a case rerun alone to find who reaches a block)."""

    cases: tuple[str, ...]
    counts: bool
    ranges: dict[str, list[tuple[int, int, int]]] = field(default_factory=dict)
    functions: dict[str, list[tuple[int, int, int]]] = field(default_factory=dict)


def read_take(result: list[dict], url_prefix: str, sources: dict[str, Source], cases: tuple[str, ...],
              counts: bool) -> Take:
    """A take from CDP's ``ScriptCoverage`` list, kept to the verified modules."""
    take = Take(cases, counts)
    for script in result:
        url = script.get("url", "")
        path = url[len(url_prefix):] if url.startswith(url_prefix) else None
        source = sources.get(path) if path else None
        if source is None:
            continue
        length = source.length
        for function in script["functions"]:
            ranges = function["ranges"]
            own = ranges[0]
            if own["startOffset"] == 0 and own["endOffset"] >= length:
                continue  # the module's top level: it ran at import
            take.functions.setdefault(path, []).append((own["startOffset"], own["endOffset"], own["count"]))
            take.ranges.setdefault(path, []).extend((r["startOffset"], r["endOffset"], r["count"]) for r in ranges)
    return take


def counts_at(blocks: list[Range], ranges: list[tuple[int, int, int]]) -> dict[Range, int]:
    """Each block's count in one take: the count of the innermost range holding it (0 if none).

    Ranges and blocks are syntactic spans, so they nest or are apart: one sweep in start order
    with a stack of open ranges finds each block's innermost holder."""
    events = sorted([(s, -e, 0, c) for s, e, c in ranges] + [(s, -e, 1, 0) for s, e in blocks])
    stack: list[tuple[int, int]] = []  # (end, count) of the ranges open at this point
    found = {}
    for start, negative_end, is_block, count in events:
        end = -negative_end
        while stack and stack[-1][0] <= start:
            stack.pop()
        if is_block:
            holder = next((c for e, c in reversed(stack) if e >= end), 0)
            found[(start, end)] = holder
        else:
            stack.append((end, count))
    return found


class ModuleBlocks:
    """One module's blocks across the takes of every engine."""

    def __init__(self, source: Source) -> None:
        self.source = source
        self.blocks: set[Range] = {(f.start, f.end) for f in source.functions}

    def learn(self, take: Take) -> None:
        self.blocks.update((s, e) for s, e, _ in take.ranges.get(self.source.path, ()))

    def tally(self, takes: list[Take]) -> tuple[dict[Range, int], dict[Range, list[str]]]:
        """Totals over the counting takes, and up to ``CASES_PER_BLOCK`` case ids per block from
        the takes of one case, in the order they ran."""
        blocks = sorted(self.blocks)
        totals = dict.fromkeys(blocks, 0)
        reached: dict[Range, list[str]] = {block: [] for block in blocks}
        for take in takes:
            ranges = take.ranges.get(self.source.path)
            if not ranges:
                continue
            single = take.cases[0] if len(take.cases) == 1 else None
            for block, n in counts_at(blocks, ranges).items():
                if take.counts:
                    totals[block] += n
                if n and single is not None and len(reached[block]) < CASES_PER_BLOCK and single not in reached[block]:
                    reached[block].append(single)
        return totals, reached


def uncovered(blocks: list[Range], run: set[Range]) -> list[Range]:
    """The outermost blocks that never ran (a block inside one that never ran did not either)."""
    out: list[Range] = []
    for block in sorted((b for b in blocks if b not in run), key=lambda b: (b[0], -b[1])):
        if out and out[-1][0] <= block[0] and block[1] <= out[-1][1]:
            continue
        out.append(block)
    return out
