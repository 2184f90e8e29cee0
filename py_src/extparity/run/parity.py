"""One parity run: the selected engines over the same cases, concurrently, then judged.

Engines run in threads (each engine's work happens in its own processes: workers, browsers),
so the browsers start while QuickJS and the reference work. The browser engines of one tree (the
page engine and its message-path twin) share one browser launch (``engines.browser.SharedBrowser``). The result does not depend on the
order in which engines finish: everything is keyed by engine and case. Module checks make
sure the bytes that ran are the bytes on disk, and that every tree holds the same modules. An
engine that reaches the subject through its modules must have loaded exactly the modules the
entries reach; one that goes through the background (``via = "message"``) exactly the scripts
the background loads.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping

from ..corpus.cases import Case
from ..corpus.deviations import load_deviations
from ..engines.base import EngineRun
from ..engines.driver import Controller, run_engine
from ..engines.sharing import KeptBrowsers, share_browsers
from ..project.config import Project
from ..project.environments import Environment
from ..project.errors import ConfigError
from ..project.hashing import sha256_hex
from ..project.kinds import build_engine
from ..project.words import count
from ..subject.linker import LinkError, module_graph
from ..subject.tree_checks import background_closure, background_on_demand, first_difference, load_manifest, tree_sha256
from .judge import CaseResult, judge
from .outcomes import run_passes


class SelectionError(ConfigError):
    """An engine name that is not configured was asked for."""


def select_engines(project: Project, text: str | None) -> list[str]:
    """Engine names from a comma-separated list, in config order; all configured when None."""
    if text is None:
        return list(project.engines)
    names = [name.strip() for name in text.split(",") if name.strip()]
    unknown = [name for name in names if name not in project.engines]
    if unknown or not names:
        raise SelectionError(f"unknown engine(s) {', '.join(unknown) or '(none given)'}; "
                             f"choose from {', '.join(project.engines)}")
    return [name for name in project.engines if name in names]


@dataclass
class RunResult:
    engines: list[str]
    reference: str | None  # the reference engine, when it is part of this run
    runs: dict[str, EngineRun]
    results: list[CaseResult]
    module_problems: list[str]
    disk_hashes: dict[str, dict[str, str]]  # module -> tree -> sha256 ("missing" where absent)
    background_hashes: dict[str, dict[str, str]]  # tree -> script the background loads -> sha256
    background_problems: list[str]  # message-path engines that loaded other scripts than the background's
    background_on_demand: dict[str, list[str]]  # tree -> background scripts only a lazy import() reaches
    per_browser: dict[str, str]  # declared per-browser module -> where its trees' copies first differ
    adapters: dict[str, dict[str, str]]  # entry -> {"path", "sha256"}
    deviation_problems: list[str]
    tree_hashes: dict[str, str] = field(default_factory=dict)  # tree -> ``tree_sha256``: every byte engines were given
    wall_s: float = 0.0
    extra_problems: list[str] = field(default_factory=list)  # added by callers (corpus, gate)

    @property
    def failed(self) -> bool:
        return not run_passes([result.cells for result in self.results], [run.status for run in self.runs.values()],
                              [self.module_problems, self.background_problems, self.deviation_problems, self.extra_problems])


def disk_hashes(project: Project) -> tuple[dict[str, dict[str, str]], list[str]]:
    """Every module the entries reach, per tree, hashed; and the trees that cannot be linked."""
    hashes: dict[str, dict[str, str]] = {}
    problems = []
    entry_modules = [entry.module for entry in project.entries.values()]
    for tree, root in project.trees.items():
        try:
            for module in module_graph(root, entry_modules):
                hashes.setdefault(module.path, {})[tree] = module.sha256
        except LinkError as exc:
            problems.append(f"tree {tree}: {exc}")
    for by_tree in hashes.values():
        for tree in project.trees:
            by_tree.setdefault(tree, "missing")
    return {path: dict(sorted(by_tree.items())) for path, by_tree in sorted(hashes.items())}, problems


def background_hashes(project: Project, trees: list[str]) -> tuple[dict[str, dict[str, str]], dict[str, list[str]], list[str]]:
    """For each tree, every script its background loads (read statically), hashed; the scripts
    of those that only an ``import()`` inside a function reaches (loaded on demand, if ever)."""
    hashes: dict[str, dict[str, str]] = {}
    on_demand: dict[str, list[str]] = {}
    problems = []
    for tree in sorted(trees):
        root = project.trees[tree]
        manifest, error = load_manifest(tree, root)
        try:
            if manifest is None:
                raise LinkError(f"{error}")
            hashes[tree] = {path: sha256_hex((root / path).read_bytes())
                            for path in sorted(background_closure(root, manifest))}
            on_demand[tree] = sorted(background_on_demand(root, manifest))
        except LinkError as exc:
            problems.append(f"tree {tree}: its background: {exc}")
    return hashes, on_demand, problems


def message_trees(project: Project, engines: Iterable[str]) -> set[str]:
    """The trees whose backgrounds ``engines`` message (a message-path engine always loads a tree)."""
    return {tree for name in engines if (tree := project.engines[name].tree) is not None}


def expected_hashes(project: Project, name: str, hashes: dict[str, dict[str, str]],
                    background: dict[str, dict[str, str]]) -> dict[str, str]:
    """What engine ``name`` must have loaded: the modules the entries reach in its tree, or,
    through the background, the scripts the background loads."""
    spec = project.engines[name]
    tree = spec.tree
    assert tree is not None  # asked only of engines that load a tree
    if spec.via == "message":
        return dict(background.get(tree, {}))
    return {module: by_tree[tree] for module, by_tree in hashes.items() if by_tree[tree] != "missing"}


def module_problems(project: Project, hashes: dict[str, dict[str, str]], runs: dict[str, EngineRun],
                    background: dict[str, dict[str, str]] | None = None,
                    on_demand: dict[str, list[str]] | None = None) -> list[str]:
    """Twins must be one file on disk, and every engine must have loaded exactly those bytes.
    A background script loaded only on demand (``on_demand``) need not have been loaded; when
    it was, its bytes must match too."""
    problems = []
    for module, by_tree in hashes.items():
        missing = [tree for tree, digest in by_tree.items() if digest == "missing"]
        present = {tree: digest for tree, digest in by_tree.items() if digest != "missing"}
        if missing:
            problems.append(f"{module}: missing in tree(s) {', '.join(missing)}")
        if len(set(present.values())) > 1 and module in project.per_browser:
            continue  # declared per-browser: its verdicts are judged, its bytes may differ
        if len(set(present.values())) > 1:
            shown = ", ".join(f"{project.relative(project.trees[tree] / module)} {digest[:12]}"
                              for tree, digest in present.items())
            problems.append(f"{module}: twins differ on disk ({shown})")
    for name, run in runs.items():
        tree = project.engines[name].tree
        if tree is None:
            continue
        if not run.module_hashes:
            if run.verdicts:  # verdicts from bytes nobody hashed prove nothing about the tree
                problems.append(f"{name}: gave verdicts but reported no hashes of the {tree} tree's modules it loaded")
            continue
        on_disk = expected_hashes(project, name, hashes, background or {})
        via_message = project.engines[name].via == "message"
        lazy = set((on_demand or {}).get(tree, ())) if via_message else set()
        reaches, not_reached = ((f"the {tree} tree's background loads it at start-up",
                                 f"the {tree} tree's background does not load") if via_message else
                                (f"the entries reach it in the {tree} tree", f"the entries do not reach in the {tree} tree"))
        for module in sorted(set(on_disk) | set(run.module_hashes)):
            loaded, expected = run.module_hashes.get(module), on_disk.get(module)
            if loaded is None and module in lazy:
                continue  # never loaded at start-up; its identity across trees is the trees check's
            if loaded is None:
                problems.append(f"{module}: {name} did not load it, but {reaches}")
            elif expected is None:
                problems.append(f"{module}: {name} loaded {loaded[:12]}, which {not_reached}")
            elif loaded != expected:
                problems.append(f"{module}: {name} loaded {loaded[:12]}, but the {tree} tree on disk "
                                f"is {expected[:12]}")
    return problems


def per_browser_modules(project: Project, hashes: dict[str, dict[str, str]],
                        background: dict[str, dict[str, str]]) -> tuple[dict[str, str], list[str]]:
    """Each declared per-browser module that differs between the trees, with where its copies
    first differ (in source lines through its map); and the declarations that are wrong: a
    module no engine loads, or one that is the same in every tree."""
    notes, problems = {}, []
    loaded = dict(hashes)
    for tree, scripts in background.items():
        for path, digest in scripts.items():
            loaded.setdefault(path, {})[tree] = digest
    for module in project.per_browser:
        by_tree = {tree: digest for tree, digest in loaded.get(module, {}).items() if digest != "missing"}
        if not by_tree:
            problems.append(f"{module}: declared in [tool.extparity].per_browser, but no engine loads it "
                            f"(not a module the entries reach, nor a script a background loads)")
        elif len(set(by_tree.values())) == 1 and len(by_tree) == len(project.trees):
            problems.append(f"{module}: declared in [tool.extparity].per_browser, but it is the same in every tree: "
                            f"remove it, so that a later difference is seen")
        elif len(set(by_tree.values())) > 1:
            notes[module] = first_difference_text(project, module, sorted(by_tree))
    return notes, problems


def first_difference_text(project: Project, module: str, trees: list[str]) -> str:
    """Where the first tree's copy of ``module`` and each other tree's first differ: a source
    location through each copy's source map, else the built line and column, said so."""
    from ..subject.sourcemap import SourceMapError, map_of, offset_position

    first = trees[0]
    base = (project.trees[first] / module).read_bytes()
    parts: list[str] = []
    unmapped: list[str] = []
    for other in trees[1:]:
        data = (project.trees[other] / module).read_bytes()
        at = first_difference(base, data) - 1  # counted from 1, as cmp counts
        places = []
        for tree, raw in ((first, base), (other, data)):
            text = raw.decode("utf-8", "replace")
            line, column = offset_position(text, len(raw[:at].decode("utf-8", "replace")))
            try:
                found = map_of(project.trees[tree] / module, project.root)
            except SourceMapError as exc:
                found, unmapped = None, unmapped + [str(exc)]
            location = found.original(line, column) if found is not None else None
            if found is None and tree not in unmapped:
                unmapped.append(tree)
            places.append(f"{tree} {location}" if location else f"{tree} {module}:{line}:{column + 1}")
        parts.append(" / ".join(places))
    note = f"per-browser: differs between trees ({count(len(trees), 'tree')}), first at {'; '.join(parts)}"
    plain = [t for t in unmapped if t in project.trees]
    if plain:
        note += f" (no source map in {', '.join(sorted(set(plain)))}: built lines)"
    return note


def adapter_hashes(project: Project) -> dict[str, dict[str, str]]:
    """Entry adapters by entry name, message adapters as ``message:ENTRY``."""
    paths = {name: entry.adapter for name, entry in project.entries.items() if entry.adapter is not None}
    paths.update({f"message:{name}": path for name, path in project.gate.messages.items()})
    adapters = {}
    for name, path in sorted(paths.items()):
        digest = sha256_hex(path.read_bytes()) if path.is_file() else "missing"
        adapters[name] = {"path": project.relative(path), "sha256": digest}
    return adapters


def judge_runs(project: Project, cases: list[Case], runs: Mapping[str, EngineRun],
               deviation_cases: set[str] | None = None) -> tuple[list[CaseResult], list[str]]:
    """Every case judged across the engines in ``runs`` (in their order): against the project's
    reference when it is one of them, else pairwise; with the known deviations of those
    engines. Also the known-deviations file's problems (``deviation_cases``: the whole corpus's
    ids, so that an entry naming no case is one; None for a partial corpus)."""
    deviations, problems = load_deviations(project.known_deviations, project.engines, deviation_cases,
                                           selected=list(runs))
    reference = project.reference if project.reference in runs else None
    return judge(cases, runs, reference, project.entries, deviations), problems


def run_parity(
    project: Project,
    cases: list[Case],
    engine_names: list[str],
    *,
    case_timeout_s: float = 10.0,
    budget_s: float = 600.0,
    jobs: int | None = None,
    deviation_cases: set[str] | None = None,
    controller: Controller | None = None,
    progress: Callable[[str, int, int], None] = lambda engine, done, total: None,
    log: Callable[[str], None] = lambda line: None,
    environment: Environment | None = None,
    instrument: Callable[[Any], Any] | None = None,
    kept: KeptBrowsers | None = None,
) -> RunResult:
    """With ``environment`` (the gate's second environments), every engine opens its sessions
    under it: only the settings its kind reaches apply (``Engine.environment_reach``).
    ``instrument`` sees each engine as it is built and returns the engine to run (an observer
    such as ``coverage.record.Recorder.instrument``; the verdicts stay the engine's). With
    ``kept``, the browsers the engines share stay open past the run (``sharing.share_browsers``)."""
    controller = controller or Controller()
    started = time.perf_counter()
    runs: dict[str, EngineRun] = {}
    lock = threading.Lock()

    engines, unbuilt = {}, {}
    for name in engine_names:
        try:
            engine = build_engine(project.engines[name], project)
            if environment is not None:
                engine.use_environment(environment)
            engines[name] = engine
        except Exception as exc:  # e.g. a missing optional binding: this engine's failure only
            unbuilt[name] = exc
    share_browsers(engines.values(), kept)  # on the engines themselves, before an observer wraps them
    if instrument is not None:
        engines = {name: instrument(engine) for name, engine in engines.items()}

    # One wire list for every engine: each case's JSON is encoded once (``WireCase.ascii_json``)
    # and held once, not once per engine (seven copies of every input at 93,600 cases).
    wire = [case.wire(project.entries[case.fn]) for case in cases]

    def one(name: str) -> None:
        spec = project.engines[name]
        log(f"{name}: running {count(len(wire), 'case')}")
        if name in unbuilt:
            run = EngineRun(description={"engine": name, "kind": spec.kind}).fail("crashed", f"{unbuilt[name]}")
        else:
            engine = engines[name]
            run = run_engine(engine, wire, case_timeout_s=case_timeout_s, budget_s=budget_s,
                             controller=controller, progress=lambda done: progress(name, done, len(wire)))
        with lock:
            runs[name] = run
        # The engine's own state apart from its cases': "35 failed cases ... (ok)" read as a pass.
        without = f", {count(len(run.failures), 'case')} that threw, timed out or crashed" if run.failures else ""
        state = "ran to the end" if run.status == "ok" else f"{run.status.upper()}: {run.detail}"
        log(f"{name}: {count(len(run.verdicts), 'verdict')}{without} in {run.timings.get('wall_s', 0):.2f}s; "
            f"engine {state}")

    workers = max(1, min(jobs or len(engine_names), len(engine_names)))
    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="extparity-engine")
    try:
        for future in [pool.submit(one, name) for name in engine_names]:
            future.result()
    except BaseException:  # Ctrl-C or SIGTERM: stop every engine before waiting for its thread
        controller.interrupt()
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    return judged_run(project, cases, {name: runs[name] for name in engine_names}, deviation_cases,
                      wall_s=time.perf_counter() - started)


def judged_run(project: Project, cases: list[Case], runs: dict[str, EngineRun], deviation_cases: set[str] | None,
               wall_s: float = 0.0) -> RunResult:
    """Judge engines' runs (in config order) against the project on disk: module bytes, the
    background's scripts, the known deviations, each case. The one judgement of a live run and
    of a recorded one (`gate --results`)."""
    engine_names = list(runs)
    hashes, link_problems = disk_hashes(project)
    via_message = {name: runs[name] for name in engine_names if project.engines[name].via == "message"}
    via_modules = {name: run for name, run in runs.items() if name not in via_message}
    background, on_demand, background_problems = background_hashes(project, sorted(message_trees(project, via_message)))
    results, deviation_problems = judge_runs(project, cases, runs, deviation_cases)
    per_browser, per_browser_problems = per_browser_modules(project, hashes, background)
    return RunResult(
        engines=engine_names,
        reference=project.reference if project.reference in runs else None,
        runs=runs,
        results=results,
        module_problems=link_problems + per_browser_problems + module_problems(project, hashes, via_modules),
        disk_hashes=hashes,
        background_hashes=background,
        background_problems=background_problems + module_problems(project, {}, via_message, background, on_demand),
        background_on_demand=on_demand,
        per_browser=per_browser,
        adapters=adapter_hashes(project),
        deviation_problems=deviation_problems,
        tree_hashes={tree: tree_sha256(root) for tree, root in sorted(project.trees.items())},
        wall_s=wall_s,
    )
