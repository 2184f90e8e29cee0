"""The release gate: every check a release must pass, each a line that says why, all of them run.

Why a gate and not `run`: a parity run answers "do the verdicts agree?" about the modules the
entries reach. A release ships more than that: whole trees, manifests, a background that must
start and answer, version strings, packed files. Each was a way to fool `run` (a second, laxer
parser copy the Firefox manifest pointed at; a module outside the verified set; a background
that threw at start-up; a parser that changed only inside the service worker; a known deviation
hiding a divergence; an empty corpus), so each is a check of its own here:

* corpus        - cases exist, for every entry, at least the configured minimum;
* trees         - every file but manifest.json and the declared glue is byte-identical;
* manifests     - key by key equal but for the declared keys; each meets its browsers' rules;
                  every file they reach exists; the line says which engines loaded which;
* release       - manifests, package.json and the newest changelog entry state one version;
* policy        - every tree is loaded by a browser; with a baseline (the last release's result),
                  no weakening of the gate's own rules that is not acknowledged (``policy``);
* purity        - the verified modules and the adapters read no environment and keep no state (``purity``);
* scripts       - every shipped script is verified or declared glue (``scripts``);
* surfaces      - every way in from outside the extension is declared (``surfaces``);
* artifacts     - one deterministic zip per tree in dist/, never replaced by other bytes, from a
                  tree whose names every disk reads alike (``shipped_files``); the engines run on
                  the artifacts' bytes (unpacked), each entry compared with the tree and with what
                  ran; dist/ holds nothing else;
* web-ext lint  - Mozilla's linter on each Firefox artifact;
* entry points  - cases also went through the background's runtime.sendMessage in every
                  browser, and it answered every one;
* background    - the scripts each background loads are the same in every tree, include the
                  verified modules, and are what the browser actually loaded;
* page scripts  - every other page, and a tab of the content scripts, opened in a browser: each
                  script they ran is one the scripts check accounted for (``page_scripts``);
* parity        - every engine agrees and meets the corpus's expectations (as `run`);
* known deviations - every entry valid, still deviating (stale ones fail unless allowed), and
                  deviating with the very bytes it records (``pinned_deviations``);
* environment   - the engines again under each second environment (another locale, time zone,
                  date, user agent, navigator.webdriver; each shipped locale), every verdict
                  byte-identical to the first run's (``environment``);
* coverage      - every block of the verified modules ran in some case in Chromium, or a marker
                  comment beside it exempts it with a reason; the reference's branches reach the
                  floor (``coverage``).
* fuzz          - a fixed-seed campaign through the headless engines, seeded from the corpus,
                  finds nothing within its case budget and time cap (``fuzz_budget``).
"""

from __future__ import annotations

import json
import shutil
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable

from ..corpus.cases import Corpus
from ..engines.driver import Controller
from ..project.config import Project, declares_content_scripts
from ..project.kinds import kind_of
from ..project.words import count
from ..reports import summary
from ..run.outcomes import NO_VERDICT, Outcome
from ..run.parity import RunResult, run_parity
from ..subject import release, tree_checks
from ..subject.linker import LinkError
from ..subject.weblint import Lint, LintResult
from . import artifacts as packing
from ..coverage.record import Recorder
from . import coverage as coverage_policy
from . import environment, fuzz_budget, page_scripts, pinned_deviations, policy, purity, scripts, shipped_files, surfaces
from .acknowledgements import Acknowledgements
from .recorded import recorded_run

# Policy over the shipped code, read from the trees before any engine starts.
STATIC_POLICY = {"purity": purity.verdict, "scripts": scripts.verdict, "surfaces": surfaces.verdict}

UNPACKED = ".unpacked"  # inside dist/: the artifacts as the engines load them, removed afterwards


@dataclass
class Check:
    name: str
    ok: bool
    line: str  # the one-line reason
    problems: list[str] = field(default_factory=list)  # everything behind a failing line

    def text(self) -> str:
        return f"{'PASS' if self.ok else 'FAIL'} {self.name}: {self.line}"

    def to_json(self) -> dict:
        return {"name": self.name, "ok": self.ok, "line": self.line, "problems": self.problems}


def check(name: str, problems: list[str], passing: str) -> Check:
    """A failing check says its first problem, and how many more there are."""
    if not problems:
        return Check(name, True, passing)
    more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
    return Check(name, False, problems[0] + more, list(problems))


@dataclass
class GateResult:
    checks: list[Check]
    run: RunResult
    tested: Project  # the project as the engines saw it: trees are the unpacked artifacts
    artifacts: list[packing.Artifact]
    lint: dict[str, LintResult]
    policy: dict  # what this run applied (``policy.record``): the next release's baseline
    coverage: dict | None = None  # the coverage document (``coverage.record``); None for a recorded run

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.checks)

    def section(self) -> dict:
        """The gate's part of the JSON report (deterministic: hashes, no times)."""
        return {
            "ok": self.ok,
            "checks": [c.to_json() for c in self.checks],
            "artifacts": {a.tree: {"path": self.tested.relative(a.path), "sha256": a.sha256, "files": a.files}
                          for a in self.artifacts},
            "web_ext": {tree: lint.messages for tree, lint in sorted(self.lint.items())},
            "policy": self.policy,
        }


def browsers_by_tree(project: Project) -> dict[str, set[str]]:
    """Tree -> the browsers that load it as an extension (their rules apply to its manifest)."""
    found: dict[str, set[str]] = {tree: set() for tree in project.trees}
    for spec in project.engines.values():
        browser = kind_of(spec.kind).extension
        if browser and spec.tree is not None:
            found[spec.tree].add(browser)
    return found


def run_gate(project: Project, corpus: Corpus, *, allow_stale: bool = False, case_timeout_s: float = 10.0,
             budget_s: float = 600.0, jobs: int | None = None, controller: Controller | None = None,
             log: Callable[[str], None] = lambda line: None, baseline: policy.Baseline | None = None,
             acknowledged: Acknowledgements | None = None, recorded: dict | None = None,
             recorded_coverage: dict | None = None) -> GateResult:
    """Every check; the parity run is the engines' own, or with ``recorded`` (a merged shard
    result) that result, accepted only for these bytes (``recorded.recorded_run``), and its
    coverage ``recorded_coverage`` (the shards' coverage files merged)."""
    browsers = browsers_by_tree(project)
    applied = policy.record(project, corpus)
    checks = [corpus_check(project, corpus), trees_check(project)]
    release = release_check(project)
    policy_check = check("policy", *policy.judge(applied, [case.id for case in corpus.cases], baseline, acknowledged))
    static_policy = [check(name, *verdict(project)) for name, verdict in STATIC_POLICY.items()]  # before the engines
    unpacked_root = project.gate.dist / UNPACKED
    shutil.rmtree(unpacked_root, ignore_errors=True)
    try:
        built, artifact_problems, unpacked = build_artifacts(project, browsers, unpacked_root)
        tested = replace(project, trees={**project.trees, **unpacked})
        lints = {tree: Lint(project.gate.web_ext or "web-ext", tested.trees[tree], project.gate.web_ext_allow)
                 for tree, kinds in browsers.items() if "firefox" in kinds}
        recorder = Recorder(tested) if recorded is None else None
        try:
            result = (recorded_run(recorded, tested, corpus) if recorded is not None else
                      run_parity(tested, corpus.cases, list(project.engines), case_timeout_s=case_timeout_s,
                                 budget_s=budget_s, jobs=jobs, controller=controller, log=log,
                                 deviation_cases={case.id for case in corpus.cases},
                                 instrument=recorder.instrument if recorder is not None else None))
            linted = {tree: lint.result() for tree, lint in lints.items()}
        finally:
            for lint in lints.values():
                lint.stop()
        checks += [manifests_check(project, browsers, result), release, policy_check, *static_policy,
                   artifacts_check(tested, built, artifact_problems)]
        if linted:
            checks.append(check("web-ext lint", [f"{tree}: {p}" for tree, r in linted.items() for p in r.problems],
                                "; ".join(f"{tree}: {r.line}" for tree, r in linted.items())))
        checks += [entry_points_check(tested, result, browsers), background_check(tested, result, browsers),
                   check("page scripts", *page_scripts.verdict(tested)),
                   parity_check(result), deviations_check(tested, result, allow_stale)]

        def again(environment, names):
            return run_parity(tested, corpus.cases, names, case_timeout_s=case_timeout_s, budget_s=budget_s,
                              jobs=jobs, controller=controller, environment=environment,
                              log=lambda line: log(f"{environment.name}: {line}"),
                              deviation_cases={case.id for case in corpus.cases})

        checks.append(check("environment", *environment.verdict(tested, corpus, result, again)))
        covered = recorder.document(result) if recorder is not None else recorded_coverage
        ran = {path: set(by_tree.values()) for path, by_tree in result.disk_hashes.items()}
        checks.append(check("coverage", *coverage_policy.verdict(
            tested, covered, "gate --results: no coverage given; pass the shards' files (run --shard K/N --coverage "
                             "PATH) with --coverage-from", cases=len(corpus.cases), hashes=ran)))
        checks.append(check("fuzz", *fuzz_budget.verdict(tested, corpus, controller, log)))
    finally:
        shutil.rmtree(unpacked_root, ignore_errors=True)
    return GateResult(checks, result, tested, built, linted, applied, covered)


def corpus_check(project: Project, corpus: Corpus) -> Check:
    counts = Counter(case.fn for case in corpus.cases)
    problems = [] if corpus.cases else ["no cases: a gate on zero cases proves nothing"]
    problems += [f"corpus: {problem}" for problem in corpus.problems]
    for entry in project.entries if corpus.cases else ():
        minimum = project.gate.minimum_cases.get(entry, 1)
        if counts[entry] == 0:
            problems.append(f"{entry}: no cases, so the entry is untested")
        elif counts[entry] < minimum:
            problems.append(f"{entry}: {count(counts[entry], 'case')}, fewer than the {minimum} that "
                            f"[tool.extparity.gate].minimum_cases asks for")
    shown = ", ".join(f"{entry} {counts[entry]}" + (f" (minimum {project.gate.minimum_cases[entry]})"
                                                    if entry in project.gate.minimum_cases else "")
                      for entry in project.entries)
    return check("corpus", problems, f"{count(len(corpus.cases), 'case')} in {count(len(corpus.files), 'file')}: {shown}")


def trees_check(project: Project) -> Check:
    glue = project.gate.glue
    problems = tree_checks.compare_trees(project.trees, glue)
    files = set().union(*(tree_checks.tree_files(tree) for tree in project.trees.values()))
    problems += [f"glue {path}: in no tree ([tool.extparity.gate].glue)" for path in glue if path not in files]
    compared = len(files - {tree_checks.MANIFEST, *glue})
    return check("trees", problems, f"{compared} files byte-identical in {', '.join(project.trees)} "
                                    f"(manifest.json compared key by key; glue: {', '.join(glue) or 'none'})")


def manifests_check(project: Project, browsers: dict[str, set[str]], result: RunResult) -> Check:
    """Static rules, and which browser engines actually loaded each tree's manifest in this run:
    the line never says a browser accepted a manifest it did not load."""
    problems = tree_checks.check_manifests(project.trees, browsers)
    manifests = {}
    for name, tree in project.trees.items():
        manifest, error = tree_checks.load_manifest(name, tree)
        if manifest is not None:
            manifests[name] = manifest
    problems += tree_checks.compare_manifests(manifests, project.gate.manifest_keys)
    reached: set[str] = set()
    for name, manifest in manifests.items():
        reached |= set(tree_checks.reachable_files(project.trees[name], manifest)[0])
    loaded = []
    for browsed, kinds in browsers.items():
        where = f"{browsed}/{tree_checks.MANIFEST}"
        for kind in sorted(kinds):
            engines = [name for name, spec in project.engines.items()
                       if spec.tree == browsed and spec.kind == kind and name in result.runs]
            ok = [name for name in engines if result.runs[name].status == "ok"]
            if ok:
                loaded.append(f"{where} by {', '.join(ok)}")
            else:  # the engines' own lines fail the gate; this one only must not claim acceptance
                why = "; ".join(f"{name} {result.runs[name].status}" for name in engines)
                loaded.append(f"{where} by no {kind} engine ({why or 'none ran'}: see entry points and parity)")
    return check("manifests", problems,
                 f"equal key by key but for {', '.join(project.gate.manifest_keys) or 'none'}; loaded "
                 f"{'; '.join(loaded) or 'by no browser engine'}; {len(reached)} files reached, all present")


def release_check(project: Project) -> Check:
    sources = {project.relative(tree / tree_checks.MANIFEST): tree / tree_checks.MANIFEST
               for tree in project.trees.values()}
    for path in (project.gate.package_json, project.gate.changelog):
        if path is not None:
            sources[project.relative(path)] = path
    versions = release.declared_versions(sources)
    version = next((v for v in versions.values() if v), None)
    return check("release", release.check_versions(versions), f"{version} in {', '.join(sources)}")


def build_artifacts(project: Project, browsers: dict[str, set[str]], unpacked_root: Path):
    """One artifact per tree in dist/, each unpacked for the engines; and what went wrong."""
    base = _release_name(project)
    built, problems, unpacked = [], [], {}
    for name, tree in project.trees.items():
        manifest, _ = tree_checks.load_manifest(name, tree)
        version = (manifest or {}).get("version")
        suffix = ".xpi" if "firefox" in browsers[name] else ".zip"
        path = project.gate.dist / packing.artifact_name(base, version if isinstance(version, str) else None, name, suffix)
        refused = shipped_files.tree_problems(name, tree)
        try:
            artifact, found = packing.build(name, tree, path, write=not refused)
            unpacked[name] = packing.unpack(artifact.data, unpacked_root / name)
        except (OSError, ValueError) as exc:
            problems.append(f"{name}: cannot build {path.name}: {exc}")
            continue
        problems += refused + found
        if refused:
            problems.append(f"{name}: not packed into {project.relative(project.gate.dist)}/: its files are refused above")
            continue
        built.append(artifact)
        problems += shipped_files.entry_problems(path.name, artifact.data if found else path.read_bytes(), tree,
                                                 unpacked[name])
    problems += shipped_files.stray_files(project.gate.dist, [a.path for a in built], unpacked_root)
    return built, problems, unpacked


def _release_name(project: Project) -> str:
    """package.json's name when configured, else the first manifest's name."""
    if project.gate.package_json is not None:
        try:
            name = json.loads(project.gate.package_json.read_text(encoding="utf-8")).get("name")
            if isinstance(name, str) and name:
                return name.split("/")[-1]
        except (OSError, ValueError, AttributeError):
            pass
    for name, tree in project.trees.items():
        manifest, _ = tree_checks.load_manifest(name, tree)
        if manifest and isinstance(manifest.get("name"), str):
            return manifest["name"]
    return "extension"


def artifacts_check(tested: Project, built: list[packing.Artifact], problems: list[str]) -> Check:
    shown = ", ".join(f"{tested.relative(a.path)} (sha256 {a.sha256[:12]}, {a.files} files)" for a in built)
    return check("artifacts", problems, f"{shown}; the engines ran on these bytes")


ADD_A_LISTENER = ("if the background has no message that runs the entry, add one (a runtime.onMessage listener "
                  "that calls it and replies)")
SEND_IT = ("and send it from the entry's message adapter ([tool.extparity.gate].messages; README, "
           "\"The message path\")")


def entry_points_check(tested: Project, result: RunResult, browsers: dict[str, set[str]]) -> Check:
    messengers = [name for name, spec in tested.engines.items() if spec.via == "message"]
    if not any(browsers.values()):
        problems = ["no engine goes through the extension's background: configure browser engines "
                    "and [tool.extparity.gate].messages"]
    elif not messengers:
        problems = ["no engine goes through the extension's background: give each entry a message adapter in "
                    "[tool.extparity.gate].messages, a module next to the config, `export default async (send, "
                    "modules, ...args) => verdictText`, that sends the message the background answers with the "
                    "entry's result; " + ADD_A_LISTENER]
    else:
        problems = [f"tree {tree}: no engine reaches its background (configure [tool.extparity.gate].messages)"
                    for tree, kinds in browsers.items()
                    if kinds and not any(tested.engines[name].tree == tree for name in messengers)]
    if messengers and not result.results:
        problems.append("no case went through the backgrounds' message paths (no cases)")
    for name in messengers:
        run = result.runs[name]
        if run.status != "ok":
            problems.append(f"{name}: {run.status}: {run.detail}")
            continue
        unanswered = [r for r in result.results if r.cells.get(name) in NO_VERDICT]
        if unanswered:
            first = unanswered[0]
            why = "; ".join(first.notes.get(name, []))
            hint = f"; {ADD_A_LISTENER} {SEND_IT}" if "the background sent no reply" in why else ""
            problems.append(f"{name}: {count(len(unanswered), 'case')} got no answer through the message path "
                            f"(first {first.case.id}: {why}){hint}")
    return check("entry points", problems, f"{', '.join(messengers)} answered all {count(len(result.results), 'case')} "
                                           f"through runtime.sendMessage to the extension's background"
                                           + content_senders(tested, messengers))


def content_senders(tested: Project, messengers: list[str]) -> str:
    """Which engines sent the cases from a content script, for trees that declare content scripts;
    and, honestly, the trees that none did (their browser engines cannot, or were not chosen)."""
    trees = sorted(tree for tree, folder in tested.trees.items() if declares_content_scripts(folder))
    if not trees:
        return ""
    parts = []
    for tree in trees:
        senders = [n for n in messengers if tested.engines[n].tree == tree and tested.engines[n].sender == "content"]
        parts.append(f"{tree} from a tab by {', '.join(senders)}" if senders else
                     f"{tree} not from a tab (no content-script path for its browser engines)")
    return "; content scripts: " + "; ".join(parts)


def background_check(tested: Project, result: RunResult, browsers: dict[str, set[str]]) -> Check:
    problems = list(result.background_problems)
    closures: dict[str, set[str]] = {}
    for tree, kinds in browsers.items():
        if not kinds:
            continue
        manifest, error = tree_checks.load_manifest(tree, tested.trees[tree])
        try:
            if manifest is None:
                raise LinkError(f"{error}")
            closures[tree] = set(tree_checks.background_closure(tested.trees[tree], manifest))
        except LinkError as exc:
            problems.append(f"{tree}: its background cannot be read: {exc}")
    verified = set(result.disk_hashes)
    for tree, closure in closures.items():
        missing = sorted(verified - closure)
        if missing:
            problems.append(f"{tree}: its background does not load {', '.join(missing)}, "
                            f"{'which the engines verified' if len(missing) == 1 else 'modules the engines verified'}")
    names = list(closures)
    for other in names[1:]:
        base = names[0]
        if closures[other] != closures[base]:
            problems.append(f"the backgrounds load different scripts: {other} loads "
                            f"{', '.join(sorted(closures[other] - closures[base])) or 'nothing more'} and {base} "
                            f"loads {', '.join(sorted(closures[base] - closures[other])) or 'nothing more'} "
                            f"that the other does not")
    scripts = sorted(next(iter(closures.values()), set()))
    loaders = [n for n, s in tested.engines.items() if s.via == "message" and result.runs[n].module_hashes]
    if not loaders:
        problems.append("no browser reported the scripts its background loaded (no engine went through the "
                        "background: see entry points)")
    lazy = sorted(set().union(*map(set, result.background_on_demand.values())))
    on_demand = (f"; {', '.join(lazy)} {'is' if len(lazy) == 1 else 'are'} imported only inside a function: "
                 f"the same in every tree, not required to load at start-up" if lazy else "")
    return check("background", problems,
                 f"{' and '.join(names)} backgrounds load the same {len(scripts)} scripts ({', '.join(scripts)}), "
                 f"the verified modules among them; {', '.join(loaders)} loaded exactly these bytes{on_demand}")


def parity_check(result: RunResult) -> Check:
    return check("parity", summary.failure_lines(result, parity_only=True), summary.closing_line(result))


def deviations_check(tested: Project, result: RunResult, allow_stale: bool) -> Check:
    where = tested.relative(tested.known_deviations) if tested.known_deviations else None
    problems = list(result.deviation_problems)  # each names the file and the entry
    problems += pinned_deviations.pinned_verdict_problems(tested, result)
    stale = [(r.case.id, [name for name, cell in r.cells.items() if cell == Outcome.STALE])
             for r in result.results if Outcome.STALE in r.cells.values()]
    if not allow_stale:
        problems += [f"stale entry: {case} no longer deviates on {', '.join(engines)}: remove it "
                     f"(or pass --allow-stale)" for case, engines in stale]
    known_cases = sum(Outcome.KNOWN in r.cells.values() for r in result.results)
    known_cells = sum(cell == Outcome.KNOWN for r in result.results for cell in r.cells.values())
    line = summary.known_deviations(known_cases, known_cells) + (
        f" in {where}, each with a reason, a link and the hash of its deviating verdicts" if where
        else " (no known_deviations file configured)")
    if stale:
        line += f"; {count(len(stale), 'stale entry', 'stale entries')} allowed by --allow-stale ({', '.join(case for case, _ in stale)})"
    return check("known deviations", problems, line)
