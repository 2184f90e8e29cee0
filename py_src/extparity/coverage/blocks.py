"""From V8's coverage ranges to blocks: what ran, how often, and which cases reach each block.

V8's precise block coverage (``Profiler.takePreciseCoverage`` with ``detailed``) reports, per
function, its range and the nested ranges whose count differs from the range around them;
ranges with equal counts are merged away, nested ones into their parent and neighbours into one
range, so the ranges of a take depend on what ran. What does not depend on it are the places
where a range begins or ends: a merged range begins and ends where its parts did. So a block
here is the stretch between two neighbouring such places (of any take, and of every function of
the source, see ``sources``) inside a function; its count in a take is that of the innermost
range of the take that holds it, which is V8's meaning of a merged range. Takes of one case name
the cases that reach a block; totals are summed over the takes of whole batches.

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
        path = url[len(url_prefix):] if url.startswith(url_prefix) else ""
        source = sources.get(path)
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

    ``blocks`` are in order and apart (see ``ModuleBlocks.blocks``), and V8's ranges nest or are
    apart, so one walk over both in start order, with a stack of the ranges open at each block,
    finds each block's innermost holder: this runs for every take."""
    ordered = sorted(ranges, key=lambda r: (r[0], -r[1]))
    stack: list[tuple[int, int]] = []  # (end, count) of the ranges open at this point, innermost last
    found = {}
    k = 0
    for start, end in blocks:
        while k < len(ordered) and ordered[k][0] <= start:
            while stack and stack[-1][0] <= ordered[k][0]:
                stack.pop()
            stack.append((ordered[k][1], ordered[k][2]))
            k += 1
        while stack and stack[-1][0] < end:
            stack.pop()
        found[(start, end)] = stack[-1][1] if stack else 0
    return found


class ModuleBlocks:
    """One module's blocks across the takes of every engine."""

    def __init__(self, source: Source) -> None:
        self.source = source
        self.functions = sorted((f.start, f.end) for f in source.functions)
        self.places: set[int] = {p for f in self.functions for p in f}
        self._blocks: list[Range] | None = None

    def learn(self, take: Take) -> None:
        before = len(self.places)
        for start, end, _ in take.ranges.get(self.source.path, ()):
            self.places.add(start)
            self.places.add(end)
        if len(self.places) != before:
            self._blocks = None

    @property
    def blocks(self) -> list[Range]:
        """The stretches between neighbouring places that lie inside a function, in order."""
        if self._blocks is None:
            places = sorted(self.places)
            self._blocks = [(a, b) for a, b in zip(places, places[1:])
                            if any(s <= a and b <= e for s, e in self.functions)]
        return self._blocks

    def tally(self, takes: list[Take]) -> tuple[dict[Range, int], dict[Range, list[str]]]:
        """Totals over the counting takes, and up to ``CASES_PER_BLOCK`` case ids per block from
        the takes of one case, in the order they ran."""
        blocks = self.blocks
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


def function_totals(path: str, takes: list[Take]) -> dict[Range, int]:
    """How often each function of a module ran, over the counting takes (V8's own range of it)."""
    totals: dict[Range, int] = {}
    for take in takes:
        if take.counts:
            for start, end, n in take.functions.get(path, ()):
                totals[(start, end)] = totals.get((start, end), 0) + n
    return totals


def uncovered(blocks: list[Range], run: set[Range], joins=lambda end, start: end == start) -> list[Range]:
    """The ranges no case ran: neighbouring blocks that never ran, joined (``joins(end, start)``
    says whether what lies between two of them is no code)."""
    out: list[Range] = []
    for block in sorted(b for b in blocks if b not in run):
        if out and joins(out[-1][1], block[0]):
            out[-1] = (out[-1][0], block[1])
        else:
            out.append(block)
    return out
