"""`extparity gate`: the release gate over the whole shipped extension (``extparity.gate.runner``; its
checks are ``extparity.gate.registry``)."""

from __future__ import annotations

import json
from pathlib import Path

from ..coverage.merge import CoverageMergeError
from ..coverage.merge import merge as merge_coverage
from ..coverage.record import dumps as coverage_dumps
from .. import api
from ..gate import acknowledgements, policy
from ..gate.recorded import RefusedResult
from ..gate.registry import UnknownCheck
from ..gate.suggest import suggest
from ..project.config import load_project
from ..project.words import count
from ..reports import summary
from ..results import build, read
from .common import (UsageError, add_limit_options, add_report_options, check_output, check_report_outputs,
                     controller, stderr, write, write_reports)


def add_parser(commands) -> None:
    parser = commands.add_parser(
        "gate", help="the release gate: trees, manifests, versions, packed artifacts, entry points, parity")
    add_limit_options(parser)
    parser.add_argument("--allow-stale", action="store_true",
                        help="a known deviation that no longer occurs is reported, not a failure")
    parser.add_argument("--baseline", metavar="PREVIOUS.json",
                        help="the last release's gate --json: fail on every policy change against it not acknowledged")
    parser.add_argument("--acknowledged", metavar="PATH",
                        help="JSON list of {change, reason, link}: the policy changes of this release (with --baseline), "
                             "or the files a first release trusts unreviewed (without)")
    parser.add_argument("--artifact", action="append", default=[], metavar="TREE=ZIP",
                        help="the zip the team uploads for TREE (`wxt zip`, `web-ext build`): the engines run on its "
                             "bytes instead of the gate's own pack, and its files must be the tree's; repeatable")
    parser.add_argument("--results", metavar="MERGED.json",
                        help="judge this result (shards joined by `extparity merge`) instead of running the engines; "
                             "refused unless it comes from this configuration, corpus and these bytes")
    parser.add_argument("--coverage-from", nargs="+", metavar="COVERAGE.json",
                        help="with --results: the shards' coverage files (`run --shard K/N --coverage PATH`), joined")
    parser.add_argument("--json", metavar="PATH", help="write the machine-readable result, with the gate's checks (- for stdout)")
    parser.add_argument("--matrix", metavar="PATH", help="write a Markdown matrix: one row per case, one column per engine")
    parser.add_argument("--timings", metavar="PATH", help="write per-engine timings (kept out of the deterministic result)")
    parser.add_argument("--coverage", metavar="PATH",
                        help="write the coverage the coverage check judged (JSON, as `run --coverage`)")
    add_report_options(parser)
    parser.add_argument("--only", metavar="CHECK,...",
                        help="run only these checks (names as --list-checks prints them, or their modules): "
                             "artifacts and engines start only if one of them needs them; never a release verdict")
    parser.add_argument("--list-checks", action="store_true",
                        help="print every check, in order, with what it needs, reads and fails on; run nothing")
    parser.add_argument("--suggest", action="store_true",
                        help="run nothing: print the glue and manifest_keys the trees need, each with the reason found")
    parser.set_defaults(handler=main)


def policy_inputs(args) -> tuple[policy.Baseline | None, acknowledgements.Acknowledgements | None]:
    """The baseline and acknowledgements, read before anything runs (an unreadable one is a usage error)."""
    if args.acknowledged and not Path(args.acknowledged).is_file():
        raise UsageError(f"{args.acknowledged}: no such file")
    try:
        baseline = policy.load_baseline(args.baseline) if args.baseline else None
    except policy.BaselineError as error:
        raise UsageError(str(error)) from None
    return baseline, acknowledgements.load(Path(args.acknowledged)) if args.acknowledged else None


def main(args) -> int:
    """Exit 0 when every selected check passes, 1 when any fails (each says why on one line), 2 on
    a usage or config error found before anything ran."""
    if args.list_checks:
        return list_checks()
    project = load_project(args.config)
    if args.suggest:
        return print_suggestion(project)
    try:
        api.gate_checks(args.only)
    except UnknownCheck as error:
        raise UsageError(str(error)) from None
    outputs = {name: check_output(getattr(args, name)) for name in ("json", "matrix", "timings", "coverage")}
    reports = check_report_outputs(args)
    baseline, acknowledged = policy_inputs(args)
    recorded = _recorded(args.results)
    recorded_coverage = _recorded_coverage(args.coverage_from, recorded is not None)
    theirs = team_artifacts(args.artifact, project)
    try:
        gated = api.gate(project, only=args.only, allow_stale=args.allow_stale, baseline=baseline,
                         acknowledged=acknowledged, recorded=recorded, recorded_coverage=recorded_coverage,
                         artifacts=theirs, browser_evidence=reports["save_failures"] is not None,
                         case_timeout_s=args.case_timeout, budget_s=args.timeout, jobs=args.jobs,
                         controller=controller(), log=stderr)
    except RefusedResult as error:
        stderr(f"extparity: gate --results {args.results}: refused: {error}")
        return 1
    gate, document = gated.result, gated.document
    if gate.run.engines:
        print(summary.summary_table(gate.run))
    write_errors = [e for e in (
        write(outputs["json"], build.chunks(document)),
        write(outputs["matrix"], summary.matrix_markdown(gate.run)),
        write(outputs["timings"], json.dumps({**build.timings(gate.run), "gate": gate.timings}, indent=1,
                                             sort_keys=True) + "\n"),
        write(outputs["coverage"], coverage_dumps(gate.coverage)) if gate.coverage is not None else None,
    ) if e]
    if any(reports.values()):  # the run's reports, the HTML with the gate's checks above its matrix
        # the gate's verdict is its checks': a browser that cannot record is said, not a failed check
        seen, evidence_problems = gate.browser_evidence
        for line in evidence_problems:
            stderr(line)
        write_errors += write_reports(document, reports, build.timings(gate.run) if args.timings else None,
                                      coverage=gate.coverage, seen=seen)
    stderr("gate: " + ", ".join(f"{name} {seconds:.1f}s" for name, seconds in gate.timings.items()))
    failed = [c for c in gate.checks if not c.ok]
    # A check's line says its first problem; stderr lists every problem of a line that says there
    # are more, so a lone problem (a fuzz finding with its input) is printed once.
    behind = [c for c in failed if len(c.problems) > 1]
    if behind:
        stderr("\nFAILED:")
        for failure in behind:
            for problem in failure.problems:
                stderr(f"  {failure.name}: {problem}")
    print()
    for line in [c.text() for c in gate.checks] + [f"FAIL reports: {e}" for e in write_errors]:
        print(line)
    ran = len(gate.checks)
    if failed or write_errors:
        names = ", ".join([c.name for c in failed] + ["reports"] * bool(write_errors))
        print(f"\ngate FAILED: {len(failed) + bool(write_errors)} of {ran} checks ({names})"
              + (f"; {partial(gate)}" if gate.not_run else ""))
        return 1
    if gate.not_run:
        print(f"\ngate PARTIAL: the {count(ran, 'check')} run passed; {partial(gate)}")
        return 0
    print(f"\ngate PASSED: all {ran} checks")
    return 0


def team_artifacts(given: list[str], project) -> dict[str, Path]:
    """`--artifact TREE=ZIP`, each checked before anything runs: a configured tree, once, a file."""
    found: dict[str, Path] = {}
    for value in given:
        tree, _, path = value.partition("=")
        if not path:
            raise UsageError(f"--artifact {value}: expected TREE=ZIP (a tree of [tool.extparity.trees] and its zip)")
        if tree not in project.trees:
            raise UsageError(f"--artifact {value}: no tree {tree!r} in [tool.extparity.trees] "
                             f"(the trees are {', '.join(project.trees)})")
        if tree in found:
            raise UsageError(f"--artifact {value}: tree {tree!r} is given twice")
        if not Path(path).is_file():
            raise UsageError(f"--artifact {value}: {path}: no such file")
        found[tree] = Path(path)
    return found


def partial(gate) -> str:
    """What a gate that ran only some checks says instead of PASSED: it is no release's verdict."""
    return (f"{count(len(gate.not_run), 'check')} not run ({', '.join(gate.not_run)}): "
            f"not a release verdict (--only)")


def list_checks() -> int:
    """`gate --list-checks`: every check in the gate's order, what it costs, what it reads, what fails it."""
    checks = api.gate_checks()
    width = max(len(spec.name) for spec in checks)
    for spec in checks:
        print(f"{spec.name:<{width}}  needs: {spec.describes()}")
        print(f"{'':<{width}}  fails when: {spec.doc}")
        print(f"{'':<{width}}  reads: {spec.config}")
    return 0


def print_suggestion(project) -> int:
    """Exit 0 when every difference can be declared; 1 when one is drift in the verified code
    (listed, never suggested)."""
    found = suggest(project)
    print(found.toml(str(project.path)), end="")
    return 1 if found.drift else 0

def _recorded_coverage(paths: list[str] | None, recorded: bool) -> dict | None:
    if not paths:
        return None
    if not recorded:
        raise UsageError("--coverage-from judges the coverage of a --results file: pass both (a live gate measures its own)")
    documents = []
    for path in paths:
        try:
            documents.append(json.loads(Path(path).read_text(encoding="utf-8")))
        except (OSError, ValueError) as error:
            raise UsageError(f"{path}: not a readable coverage file ({getattr(error, 'strerror', None) or error})") from None
    try:
        return merge_coverage(documents)
    except (CoverageMergeError, KeyError, TypeError) as error:
        raise UsageError(f"--coverage-from: cannot join the coverage files: {error}") from None


def _recorded(path: str | None) -> dict | None:
    if path is None:
        return None
    try:
        return read.load(path)
    except read.ResultError as error:
        raise UsageError(str(error)) from None
