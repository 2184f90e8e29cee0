"""The gate's coverage check: every block of the verified modules ran in some case.

A differential gate only judges the behaviour some case reaches: a rule that fires on an input
no case has passes every parity check. So each block that no case ran fails the gate, naming the
module and the line, unless a marker comment beside it exempts it with a reason
(``// extparity-unreachable: REASON``, see ``coverage.markers``); a marker that no longer exempts
an unrun block is stale and fails too, as stale deviations do, and so does one that marks nothing
or gives no reason. The reference's branch coverage must reach ``reference_branch_floor``
percent. Without coverage (no Chromium engine, or a merged result that carries none) the check
fails: it cannot say the code ran.

A built module with a source map (a bundle) is judged in its sources: each unrun block is named
by the source lines that wrote it (``utils/toolcalls.ts:42``), the markers are read in the
map's ``sourcesContent`` (a stale one still fails), and code of the sources the map's
``ignoreList`` names (the bundler's own runtime, from ``node_modules``) is counted apart, as no
marker can be written there. A minified module without a map is said so once.
"""

from __future__ import annotations

from ...coverage.markers import FORM, Marker, read_markers
from ...coverage.sources import Source, line_starts
from ...project.config import Project
from ...project.hashing import sha256_hex
from ...project.words import QUOTE, count, quote
from ...subject.sourcemap import Location, SourceMapError, map_of
from ..context import Gate
from ..registry import ENGINES, Spec

FIX = f"add a case that reaches it, or mark it unreachable beside the code with a reason ({FORM})"


def judge(project: Project, document: dict | None, missing: str = "", cases: int | None = None,
            hashes: dict[str, set[str]] | None = None, origin: Project | None = None) -> tuple[list[str], str]:
    """Problems and the passing line. ``cases``: how many cases the coverage must have seen in each
    engine; ``hashes``: module -> the SHA-256 the engines ran (a recorded document must match);
    ``origin``: the project as configured, whose trees' source maps name the sources where they
    lie (the gate's engines ran unpacked artifacts elsewhere)."""
    if document is None:
        return [missing or "no coverage was recorded"], ""
    engines = document.get("engines", {})
    if not engines:
        return ["no coverage: no Chromium engine ran (block coverage is read from Chromium's DevTools profiler); "
                "configure an engine of kind chromium"], ""
    problems = [f"{name}: {info['status']}: its coverage is incomplete" for name, info in engines.items()
                if info["status"] != "ok"]
    if cases is not None:
        problems += [f"{name}: its coverage saw {info['cases']} of {count(cases, 'case')} (a shard's coverage file "
                     f"missing?)" for name, info in engines.items() if info["status"] == "ok" and info["cases"] != cases]
    modules = document.get("modules", {})
    for path, module in modules.items():
        if hashes is not None and module["sha256"] not in hashes.get(path, set()):
            problems.append(f"{path}: its coverage is of other bytes ({module['sha256'][:12]}) than the engines ran")
    problems += list(document.get("problems", []))
    marked: dict[str, list[Marker]] = {}
    maps = {path: built_map(origin or project, path, module["sha256"]) for path, module in modules.items()}
    for path, module in modules.items():
        marked[path], malformed = read_markers(path, module["source"])
        problems += malformed
        if maps[path] is not None:  # markers are written in the sources the map gives
            for index, name in enumerate(maps[path].sources):
                content = maps[path].contents[index]
                if content is not None and index not in maps[path].ignored and name not in marked:
                    marked[name], malformed = read_markers(name, content)
                    problems += malformed
    used: set[Marker] = set()
    exempted: dict[str, int] = {}  # module -> unrun ranges its markers exempt
    bundler = 0  # unrun ranges wholly in code the map's ignoreList names (the bundler's runtime)
    not_run = []
    unmapped = []
    for path, module in modules.items():
        source = Source(path, module["source"], module["sha256"], line_starts(module["source"]), ())
        mapped = maps[path]
        if mapped is None and module["uncovered"] and max(map(len, module["source"].split("\n"))) > MINIFIED:
            unmapped.append(path)
        for block in module["uncovered"]:
            if mapped is not None:
                places = mapped_places(mapped, source, block)
                if not places:
                    bundler += 1
                    continue
                over = [m for (name, line) in places for m in marked.get(name, ()) if m.first <= line <= m.last]
                used.update(over)
                if all(any(m.first <= line <= m.last for m in marked.get(name, ())) for name, line in places):
                    exempted[path] = exempted.get(path, 0) + 1
                    continue
                name, line = min(places, key=lambda place: (place[0] != places[0][0], place[1]))
                code = (mapped.source_line(Location(name, line, 0)) or "").strip()
                not_run.append(f"{name}:{line}: no case runs this block ({quote(code)}; built {path}:"
                               f"{block['lines'][0]}); {FIX}")
                continue
            first, last = block["lines"]
            # A marker is in use while any of its lines is unrun (a smaller corpus leaves a wider
            # range unrun around it); markers excuse a range only if their lines hold all its code.
            over = [m for m in marked[path] if m.first <= last and first <= m.last]
            used.update(over)
            code_lines = {source.line_of(unit) for unit in range(block["start"], block["end"]) if source.code[unit]}
            if all(any(m.first <= line <= m.last for m in over) for line in code_lines):
                exempted[path] = exempted.get(path, 0) + 1
                continue
            not_run.append(f"{unrun(source, block)}; {FIX}")
    for path, found in marked.items():
        for marker in found:
            if marker in used:
                continue
            if path in modules:
                held = [row for row in modules[path]["block_list"]
                        if marker.first <= row["lines"][1] and row["lines"][0] <= marker.last]
            else:  # a source the map gives: the blocks whose code it wrote
                held = [row for built, module in modules.items() if maps[built] is not None
                        for row in module["block_list"]
                        if any(name == path and marker.first <= line <= marker.last
                               for name, line in mapped_places(maps[built], Source(
                                   built, module["source"], module["sha256"], line_starts(module["source"]), ()), row))]
            if not held:
                problems.append(f"{marker.named()} marks nothing: no block lies in {marker.span} (code outside "
                                f"every function runs at import and is not counted)")
                continue
            case = next((c for row in held for c in row["cases"]), None)
            reached = f" (case {case} reaches them)" if case else ""
            problems.append(f"{marker.named()} is stale: every block of {marker.span} ran{reached}: remove the marker")
    reference = document.get("reference")
    branch_floor = project.gate.reference_branch_floor
    ref_line = ""
    if reference is not None:
        if reference.get("problem"):
            problems.append(f"reference {reference['engine']}: {reference['problem']}")
        rate = 100.0 * reference["branches_run"] / reference["branches"] if reference["branches"] else 0.0
        ref_line = (f"; reference: {reference['branches_run']} of {reference['branches']} branches "
                    f"({rate:.1f}%, floor {branch_floor:g}%)")
        if rate < branch_floor:
            problems.append(f"reference {reference['engine']}: {rate:.1f}% of its branches ran, below the floor of "
                            f"{branch_floor:g}% ([tool.extparity.gate].reference_branch_floor)")
    elif branch_floor > 0:
        problems.append("reference: no branch coverage was recorded, but [tool.extparity.gate].reference_branch_floor "
                        "asks for one (name its files in [tool.extparity.coverage].reference)")
    blocks = sum(m["blocks"] for m in modules.values())
    run = sum(m["blocks_run"] for m in modules.values())
    floor = project.gate.block_coverage_floor
    block_rate = 100.0 * run / blocks if blocks else 100.0
    if floor >= 100 or block_rate < floor:
        problems = not_run + problems
    below = (f"; {count(len(not_run), 'range')} not run, allowed by block_coverage_floor {floor:g}%"
             if not_run and floor < 100 and block_rate >= floor else "")
    functions = sum(m["functions"] for m in modules.values())
    markers_used: dict[str, int] = {}
    for marker in used:
        name = marker.module.rsplit("/", 1)[-1]
        markers_used[name] = markers_used.get(name, 0) + 1
    exempt = (f"{count(sum(exempted.values()), 'unrun range')} exempted by {count(len(used), 'marker')} "
              f"({', '.join(f'{name} {n}' for name, n in sorted(markers_used.items()))})" if used
              else "no marker exempts an unrun range")
    runtime = (f"; {count(bundler, 'unrun range')} in the bundler's own code (the source map's ignoreList)"
               if bundler else "")
    sourced = "; locations in source lines through source maps" if any(maps.values()) else ""
    if unmapped:  # said once: its locations are lines of minified code
        problems = [f"{p} (no source map for {', '.join(unmapped)}: lines are built lines)" if i == 0 else p
                    for i, p in enumerate(problems)]
    summary = (f"{count(len(modules), 'verified module')}: {run} of {blocks} blocks and "
               f"{sum(m['functions_run'] for m in modules.values())} of {functions} functions run in "
               f"{', '.join(engines)}; {exempt}{below}{runtime}{sourced}{ref_line}")
    return problems, summary


def unrun(source: Source, block: dict) -> str:
    """Where an unrun block is and its code: its first line, or in a line longer than a quote (a
    minified module is one line) the code from the block's own column, so that each block of the
    line shows itself rather than the line's first 80 characters."""
    first, last = block["lines"]
    line = source.line_text(first, first)
    where = f"{source.path}:{first}" + (f"-{last}" if last != first else "")
    if len(line) <= QUOTE:
        return f"{where}: no case runs this block ({quote(line)})"
    column = block["start"] - source.line_starts[first - 1]
    code = source.text.encode("utf-16-le", "surrogatepass")[2 * block["start"]:2 * block["end"]].decode("utf-16-le", "replace")
    return f"{source.path}:{first}:{column + 1}: no case runs this block ({quote(code)})"


MINIFIED = 500  # a built line this long is minified code, whose line numbers name nothing


def built_map(project: Project, path: str, sha256: str):
    """The source map of the verified module ``path`` as the engines ran it (the tree whose copy
    has these bytes), or None without one."""
    for root in project.trees.values():
        file = root / path
        if file.is_file() and sha256_hex(file.read_bytes()) == sha256:
            try:
                return map_of(file, project.root)
            except SourceMapError:
                return None
    return None


def mapped_places(mapped, source: Source, block: dict) -> list[tuple[str, int]]:
    """The source lines (``(source, line)``, in order, once each) that wrote the code of an
    unrun block, leaving out code of sources the map's ``ignoreList`` names."""
    places: dict[tuple[str, int], None] = {}
    for unit in range(block["start"], block["end"]):
        if not source.code[unit]:
            continue
        line = source.line_of(unit)
        found = mapped.original(line, unit - source.line_starts[line - 1])
        if found is not None and found.source not in mapped.ignored_names:
            places[(found.source, found.line)] = None
    return list(places)


RECORDED_WITHOUT = ("gate --results: no coverage given; pass the shards' files (run --shard K/N --coverage PATH) "
                    "with --coverage-from")


def prepare(gate: Gate) -> None:
    """The engines' run records its coverage (Chromium's block coverage, the reference's
    branches); a merged result brings the shards' coverage instead."""
    from ...coverage.record import Recorder

    if gate.options.recorded is None:
        gate.recorder = Recorder(gate.tested)


def verdict(gate: Gate) -> tuple[list[str], str]:
    gate.coverage = (gate.recorder.document(gate.result) if gate.recorder is not None
                     else gate.options.recorded_coverage)
    ran = {path: set(by_tree.values()) for path, by_tree in gate.result.disk_hashes.items()}
    return judge(gate.tested, gate.coverage, RECORDED_WITHOUT, cases=len(gate.corpus.cases), hashes=ran,
                 origin=gate.project)


CHECK = Spec("coverage",
             "a block of the verified modules no case runs that no `extparity-unreachable` marker beside "
             "the code exempts, a stale or empty marker, reference branches below `reference_branch_floor`",
             "`// extparity-unreachable:` markers in the verified modules, [tool.extparity.gate].block_coverage_floor, "
             "reference_branch_floor, [tool.extparity.coverage]",
             verdict, needs=(ENGINES,), prepare=prepare)
