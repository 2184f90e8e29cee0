"""The gate on a recorded result (`gate --results MERGED.json`) instead of a run of its own.

Why: a large corpus runs in minutes as N shard jobs (`run --shard K/N`, then `merge`); the gate
then judges the merged result rather than running every engine again. It must never pass on a
result that is not about what it gates, so the result is accepted only when it comes from this
configuration and these bytes, and refused with one line otherwise:

* the configured engines, each with its kind and tree, and the same reference;
* the same entries, adapters and corpus: every case, by id, with its file, line, arguments and
  expectation, and a cell for every engine in every case;
* the same bytes: every tree's digest (``tree_sha256``: all files, not only the modules) equals
  the artifacts' unpacked trees', and so do the module and background hashes on disk.

What an accepted result cannot show by itself is then judged here by the same code as a live
run (``judged_run``): the verdicts are judged again against the corpus and the known
deviations on disk, and the hashes each engine loaded against the artifacts' bytes. A verdict
that judges differently here than in the result means it was judged under other rules (another
known-deviations file, another extparity): refused as well. The checks that need a live
browser (entry points, background) read the message-path engines' runs from the result: their
status, their answers, and the hashes of the scripts the background loaded, which is what those
checks read of a live run too.
"""

from __future__ import annotations

from ..corpus.cases import Corpus
from ..engines.base import CaseFailure, EngineRun
from ..project.config import Project
from ..results import read
from ..run.outcomes import NO_VERDICT, Outcome
from ..run.parity import RunResult, adapter_hashes, background_hashes, disk_hashes, judged_run, message_trees
from ..subject.tree_checks import tree_sha256

CELLS = frozenset(Outcome)


class RefusedResult(Exception):
    """A recorded result that is not about this configuration and these bytes (one line)."""


def recorded_run(document: dict, tested: Project, corpus: Corpus) -> RunResult:
    """The run recorded in ``document``, judged against ``tested`` (the artifacts' trees)."""
    engines = list(tested.engines)
    _same_configuration(document, tested, engines)
    _same_bytes(document, tested)
    by_id = _same_corpus(document, corpus, engines)
    runs = {name: _engine_run(document["engines"][name], name, by_id) for name in engines}
    result = judged_run(tested, corpus.cases, runs, {case.id for case in corpus.cases})
    for judged in result.results:
        recorded = by_id[judged.case.id]["cells"]
        for name in engines:
            if judged.cells[name] != recorded[name]:
                raise RefusedResult(f"case {judged.case.id}: {name} is {recorded[name]!r} in the result but "
                                    f"{str(judged.cells[name])!r} judged here (judged with other known deviations "
                                    f"or another extparity)")
    return result


def _same_configuration(document: dict, tested: Project, engines: list[str]) -> None:
    recorded = read.engine_names(document)
    if recorded != engines:
        raise RefusedResult(f"it ran engines {', '.join(recorded) or '(none)'}; the gate needs exactly "
                            f"{', '.join(engines)}")
    for name in engines:
        spec, engine = tested.engines[name], document["engines"].get(name, {})
        for key, expected in (("kind", spec.kind), ("tree", spec.tree)):
            if engine.get(key) != expected:
                raise RefusedResult(f"engine {name}: {key} {engine.get(key)!r} in the result, {expected!r} in the config")
    if document.get("reference") != tested.reference:
        raise RefusedResult(f"reference {document.get('reference')!r} in the result, {tested.reference!r} in the config")
    entries = {name: {"args": list(entry.args), "executes": entry.executes, "items": dict(entry.list_items)}
               for name, entry in tested.entries.items()}
    if document.get("entries") != entries:
        raise RefusedResult("its entries (names, arguments, executes) are not the config's")
    adapters = adapter_hashes(tested)
    for name in sorted(set(adapters) | set(document["modules"].get("adapters", {}))):
        if document["modules"].get("adapters", {}).get(name) != adapters.get(name):
            raise RefusedResult(f"adapter {name}: not the bytes on disk ({adapters.get(name, {}).get('path', 'none')})")


def _same_bytes(document: dict, tested: Project) -> None:
    modules = document["modules"]
    if "trees" not in modules:
        raise RefusedResult("it records no tree digests (written by an older extparity): run the shards again")
    for tree, root in sorted(tested.trees.items()):
        digest, recorded = tree_sha256(root), modules["trees"].get(tree)
        if recorded != digest:
            raise RefusedResult(f"tree {tree}: the engines were given {str(recorded)[:12]}, the artifact unpacks "
                                f"to {digest[:12]} (other bytes: rerun the shards on this commit)")
    on_disk, _ = disk_hashes(tested)
    if modules["on_disk"] != on_disk:
        module = next(m for m in sorted(set(on_disk) | set(modules["on_disk"]))
                      if on_disk.get(m) != modules["on_disk"].get(m))
        raise RefusedResult(f"module {module}: its hashes in the result are not the artifacts' bytes")
    trees = sorted(message_trees(tested, [name for name, spec in tested.engines.items() if spec.via == "message"]))
    background, _, _ = background_hashes(tested, trees)
    if modules["background"] != background:
        raise RefusedResult("the background scripts' hashes in the result are not the artifacts' bytes")


def _same_corpus(document: dict, corpus: Corpus, engines: list[str]) -> dict[str, dict]:
    by_id: dict[str, dict] = {}
    for case in document["cases"]:
        by_id[case["id"]] = case
    extra = sorted(set(by_id) - {case.id for case in corpus.cases})
    if extra:
        raise RefusedResult(f"case {extra[0]} is in the result but not in the corpus ({len(extra)} such cases)")
    for case in corpus.cases:
        recorded = by_id.get(case.id)
        if recorded is None:
            raise RefusedResult(f"case {case.id} ({case.file}:{case.line}) has no result: a shard is missing")
        for key, value in (("fn", case.fn), ("file", case.file), ("line", case.line), ("args", dict(case.fields)),
                           ("expect", case.expect)):
            if recorded.get(key) != value:
                raise RefusedResult(f"case {case.id} ({case.file}:{case.line}): its {key} in the result is not the "
                                    f"corpus's")
        cells = recorded["cells"]
        missing = [name for name in engines if name not in cells]
        if missing or set(cells) - set(engines):
            raise RefusedResult(f"case {case.id}: no cell for {', '.join(missing) or 'some engine'} "
                                f"(or cells for engines not configured)")
        odd = [cell for cell in cells.values() if cell not in CELLS]
        if odd:
            raise RefusedResult(f"case {case.id}: unknown cell {odd[0]!r}")
    return by_id


def _engine_run(engine: dict, name: str, by_id: dict[str, dict]) -> EngineRun:
    """The engine's run as the judge reads it: verdicts, failures, status, loaded hashes."""
    run = EngineRun(status=engine["status"], detail=engine["detail"], module_hashes=dict(engine["module_hashes"]),
                    description=dict(engine["versions"]))
    for case_id, case in by_id.items():
        verdicts = read.verdicts(case)
        cell = case["cells"][name]
        if name in verdicts:
            run.verdicts[case_id] = verdicts[name]
        elif cell in (Outcome.ERROR, Outcome.TIMEOUT, Outcome.CRASH):
            run.failures[case_id] = CaseFailure(cell, case.get("notes", {}).get(name, [""])[0])
        elif cell not in NO_VERDICT and run.status == "ok":
            # a known deviation without a verdict: it failed, and the failure's kind is not recorded
            run.failures[case_id] = CaseFailure("error", case.get("notes", {}).get(name, [""])[0])
    return run
