"""The gate's policy, recorded in its JSON and compared with the last release's.

Why: everything that decides what the gate checks lives in the change it gates: the engines
in the config, the corpus lines, the known deviations, the adapters that call the subject, the
minimum case counts and every exception of ``[tool.extparity.gate]``. A change that deletes
the Firefox engine, the corpus lines that catch its bug, or adds a deviation that covers it,
passes a gate that reads only the change. So the gate writes its policy into its result
(``gate.policy``), and ``--baseline PREVIOUS.json`` (the last release's result, kept by CI)
fails on every change that weakens it, unless an acknowledgements file names that change with
a reason and a link: one file shows a reviewer every policy change of the release.

What counts as weakening, compared with the baseline:

* engines: an engine removed, or its kind, tree or options changed; a tree that a browser
  kind no longer loads; another reference engine;
* entries: one removed, or its module, export or arguments changed;
* cases: a case id that disappeared (added cases are fine), or a case whose input or
  expectation changed under the same id (that can empty a case as surely as deleting it);
* known deviations: one added, or changed in any field (its pinned verdicts included);
* adapters (entry and message adapters): bytes changed, added or removed;
* coverage markers (``// extparity-unreachable: REASON`` in the verified modules, see
  ``coverage.markers``): one added, the lines one exempts rewritten (each is recorded with its
  module, its reason and the SHA-256 of the exact text of those lines), or its reason changed.
  Where a marker stands is not compared: code moving above it is no change;
* ``minimum_cases``: an entry's minimum lowered;
* every other key of ``[tool.extparity.gate]`` is an exception or a setting: an item added to
  a list (``glue``, ``manifest_keys``, ``web_ext.allow``, and any exception list a later
  version adds, with no change here), or a setting changed or removed (``dist``,
  ``web_ext.command``...). Removing an item from a list makes the gate stricter and is fine.

* shipped files: every file of every tree outside the verified modules (the entries' graph),
  pinned by its SHA-256: the background and glue, pages, content scripts, workers, locale
  data, assets, manifests. One added, removed or changed is a change (a file that became a
  verified module is not: it is checked as one now). These are the bytes no check verifies
  (parity compares only what the cases reach), so review must have read each version;
* fuzz (``[tool.extparity.fuzz]``): a plugin added, removed or its bytes changed, an entry's
  generators or a weight changed: each decides which cases the gate's fuzz budget runs;
* ``[tool.extparity.coverage].reference``: the reference's packages the branch floor counts;
* the checks: one the last release's gate had that this gate's registry lacks.

Each change is one line that pins what it changed to (hashes where the change is bytes), and
an acknowledgement quotes that line exactly, so it cannot cover a later, different change.
Where the line pins bytes a reviewer must have read (a shipped file, a fuzz plugin), it
carries the whole SHA-256: a 12-digit prefix can be matched by a forged file with 2**48 tries.

Without a baseline (a first release), every tree must be loaded by a browser engine, and the
shipped files outside the verified modules are trusted unreviewed: each is a line
``trusted unreviewed: TREE/PATH (sha256 ...)`` that the acknowledgements must quote, so the
first release too names every file review must have read. In either case, a reason in the
config or the acknowledgements that is still the placeholder ``init`` or ``--suggest``
wrote (``acknowledgements.placeholder``) fails until someone writes their own.
"""

from __future__ import annotations

import json
import tomllib
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from ..corpus.cases import Corpus
from ..coverage.markers import read_markers
from ..corpus.deviations import load_deviations
from ..fuzz.generators import BUILTIN, plugin_file
from ..project.config import DECLARED, Project
from ..project.kinds import KINDS, engine_class
from ..project.hashing import sha256_hex
from ..project.words import count
from ..results import read
from ..run.parity import adapter_hashes
from ..subject.linker import LinkError, import_closure, parsed_modules
from ..subject.tree_checks import tree_files
from .acknowledgements import Acknowledgements, placeholder

# [tool.extparity.gate] keys compared on their own terms; every other key is an exception or setting
OWN_TERMS = ("minimum_cases", "messages", "environments")


def record(project: Project, corpus: Corpus, checks: list[str]) -> dict:
    """The policy this gate run applied, as data (deterministic; paths relative to the project).
    ``checks``: every check of the gate's registry, so that one the next gate lacks (a harness
    change that dropped it) is a change to acknowledge."""
    deviations, _ = load_deviations(project.known_deviations, project.engines, None)
    return {
        "engines": {name: {"kind": spec.kind, "tree": spec.tree, "options": spec.options}
                    for name, spec in project.engines.items()},
        "trees": {tree: sorted({engine_class(s.kind).EXTENSION for s in project.engines.values()
                                if s.tree == tree and engine_class(s.kind).EXTENSION}) for tree in project.trees},
        "reference": project.reference,
        "entries": {name: {"module": entry.module, "export": entry.export, "args": list(entry.args)}
                    for name, entry in project.entries.items()},
        "cases": {"count": len(corpus.cases), "sha256": case_ids_hash([case.id for case in corpus.cases]),
                  "contents": {case.id: case_contents(case) for case in sorted(corpus.cases, key=lambda c: c.id)}},
        "known_deviations": {case: {"engines": list(d.engines), "reason": d.reason, "link": d.link,
                                    "verdicts": dict(sorted(d.verdicts.items()))}
                             for case, d in sorted(deviations.items())},
        "adapters": adapter_hashes(project),
        "markers": markers(project),
        "minimum_cases": {entry: project.gate.minimum_cases.get(entry, 1) for entry in project.entries},
        # the second environments in effect (the default ones when the key is absent): one removed
        # or changed weakens the environment check, where a removed exception would strengthen
        "environments": {e.name: e.settings() for e in project.gate.environments},
        "settings": settings(project),
        **shipped(project),
        "fuzz": fuzz_settings(project),
        "coverage": {"reference": list(project.coverage.reference)},
        "checks": list(checks),
    }


def shipped(project: Project) -> dict[str, dict]:
    """``verified``: each tree's verified modules (the entries' graph); ``shipped``: every other
    file of each tree with its SHA-256, what the gate pins instead of verifying. A tree whose
    graph cannot be linked has no verified module here (the run says why)."""
    entries = [entry.module for entry in project.entries.values()]
    verified: dict[str, list[str]] = {}
    pinned: dict[str, dict[str, str]] = {}
    for tree in sorted(project.trees):
        root = project.trees[tree]
        try:
            modules = set(import_closure(root, entries))
        except LinkError:
            modules = set()
        verified[tree] = sorted(modules)
        pinned[tree] = {rel: sha256_hex((root / rel).read_bytes()) for rel in sorted(tree_files(root))
                        if rel not in modules}
    return {"verified": verified, "shipped": pinned}


def fuzz_settings(project: Project) -> dict[str, Any]:
    """What decides the cases the gate's fuzz budget runs besides its seed and count: each
    plugin's bytes (None when its file cannot be found), each entry's generators as the
    campaign picks them (the built-in ones when the config names none) and the weights."""
    return {"plugins": {ref: _file_hash(plugin_file(ref, project.root)) for ref in project.fuzz.plugins},
            "generators": {entry: list(project.fuzz.generators.get(entry, tuple(BUILTIN))) for entry in project.entries},
            "weights": dict(sorted(project.fuzz.weights.items()))}


def _file_hash(path: Path | None) -> str | None:
    return sha256_hex(path.read_bytes()) if path is not None and path.is_file() else None


def markers(project: Project) -> list[dict[str, str]]:
    """Every coverage marker of the verified modules (the entries' graph) of every tree, once:
    trees that ship the same modules hold the same markers."""
    found: dict[tuple, dict[str, str]] = {}
    entries = [entry.module for entry in project.entries.values()]
    for tree in sorted(project.trees):
        try:
            modules = parsed_modules(project.trees[tree], entries)
        except LinkError:
            continue  # the engines cannot load such a tree either: the run names why
        for path, _, source in modules:
            for marker in read_markers(path, source.decode("utf-8"))[0]:
                found[(marker.module, marker.first, marker.reason, marker.sha256)] = {
                    "module": marker.module, "lines": marker.lines, "reason": marker.reason, "sha256": marker.sha256}
    return [found[key] for key in sorted(found)]


def marker_changes(old: list[dict], new: list[dict]) -> list[str]:
    """Markers of ``new`` that ``old`` has not, each as an addition, as rewritten lines (a marker
    gone with the same module and reason) or as a new reason (one gone over the same text)."""
    def key(marker: dict) -> tuple[str, str, str]:
        return marker["module"], marker["reason"], marker["sha256"]

    added = Counter(map(key, new)) - Counter(map(key, old))
    gone = Counter(map(key, old)) - Counter(map(key, new))
    lines = []
    for marker in new:
        module, reason, sha = key(marker)
        if added[(module, reason, sha)] == 0:
            continue
        added[(module, reason, sha)] -= 1
        named = f"coverage marker {module} {json.dumps(reason, ensure_ascii=False)}"
        same_reason = next((k for k, n in gone.items() if n and k[:2] == (module, reason)), None)
        same_text = next((k for k, n in gone.items() if n and (k[0], k[2]) == (module, sha)), None)
        if same_reason is not None:
            gone[same_reason] -= 1
            lines.append(f"{named}: the lines it exempts changed (sha256 {same_reason[2][:12]} -> {sha[:12]})")
        elif same_text is not None:
            gone[same_text] -= 1
            lines.append(f"{named}: its reason changed from {json.dumps(same_text[1], ensure_ascii=False)} "
                         f"(sha256 {sha[:12]})")
        else:
            first, _, last = marker["lines"].partition("-")
            lines.append(f"{named}: added (exempts {count(int(last or first) - int(first) + 1, 'line')}, "
                         f"sha256 {sha[:12]})")
    return lines


def case_ids_hash(ids: list[str]) -> str:
    return sha256_hex("\n".join(sorted(ids)).encode("utf-8"))


def case_contents(case: Any) -> str:
    """Short hashes of what a case sends (entry and arguments) and of what it expects: 'input:expect'."""
    return f"{_short_hash([case.fn, case.fields])}:{_short_hash(case.expect)}"


def settings(project: Project) -> dict[str, Any]:
    """Every other leaf of ``[tool.extparity.gate]``, read from the file itself so that a key a
    later version adds is covered without a change here: a list (its items sorted) or a value."""
    table = tomllib.loads(project.path.read_text(encoding="utf-8"))["tool"]["extparity"].get("gate", {})
    found: dict[str, Any] = {}

    def walk(value: Any, where: str) -> None:
        if isinstance(value, dict):
            for key in sorted(value):
                walk(value[key], f"{where}.{key}" if where else key)
        elif isinstance(value, list):
            found[where] = sorted(value, key=_canonical)
        else:
            found[where] = value

    walk({"glue": [], **{key: value for key, value in table.items() if key not in OWN_TERMS}}, "")
    return found


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def _shown(value: Any) -> str:
    return value if isinstance(value, str) else _canonical(value)


def _short_hash(value: Any) -> str:
    # surrogatepass: corpus inputs hold lone surrogates (the UTF-16 cases), which JSON text keeps
    return sha256_hex(_canonical(value).encode("utf-8", "surrogatepass"))[:12]


def unbrowsed_trees(policy: dict) -> list[str]:
    return [f"tree {tree}: no browser engine loads it, so what ships from it is not gated (configure a "
            f"{' or '.join(sorted(filter(None, (engine_class(k).EXTENSION for k in KINDS))))} engine with "
            f"tree = \"{tree}\")"
            for tree, kinds in policy["trees"].items() if not kinds]


def changes(old: dict, new: dict, old_case_ids: list[str], new_case_ids: list[str]) -> list[str]:
    """Every weakening of ``new`` against ``old`` (both ``record()``s), one line each."""
    lines: list[str] = []
    for name, spec in old["engines"].items():
        now = new["engines"].get(name)
        if now is None:
            lines.append(f"engine {name}: removed (kind {spec['kind']}, tree {spec['tree']})")
            continue
        for key in ("kind", "tree"):
            if now[key] != spec[key]:
                lines.append(f"engine {name}: {key} {spec[key]} -> {now[key]}")
        if now["options"] != spec["options"]:
            lines.append(f"engine {name}: options {_canonical(spec['options'])} -> {_canonical(now['options'])}")
    for tree, kinds in old["trees"].items():
        for kind in kinds:
            if kind not in new["trees"].get(tree, []):
                lines.append(f"tree {tree}: no {kind} engine loads it any more")
    if new["reference"] != old["reference"]:
        lines.append(f"reference: {old['reference']} -> {new['reference']}")
    for name, entry in old["entries"].items():
        now = new["entries"].get(name)
        if now is None:
            lines.append(f"entry {name}: removed")
        elif now != entry:
            lines.append(f"entry {name}: {_canonical(entry)} -> {_canonical(now)}")
    kept = set(new_case_ids)
    lines += [f"case {case}: removed from the corpus" for case in sorted(set(old_case_ids) - kept)]
    old_contents, new_contents = old["cases"].get("contents", {}), new["cases"].get("contents", {})
    for case in sorted(set(old_contents) & set(new_contents)):
        before, now = old_contents[case].split(":"), new_contents[case].split(":")
        changed = [part for part, a, b in zip(("input", "expectation"), before, now) if a != b]
        if changed:
            lines.append(f"case {case}: its {' and '.join(changed)} changed under the same id "
                         f"(sha256 {':'.join(before)} -> {':'.join(now)})")
    for case, entry in new["known_deviations"].items():
        before = old["known_deviations"].get(case)
        if before is None:
            lines.append(f"known deviation {case}: added for {', '.join(entry['engines'])} "
                         f"(entry sha256 {_short_hash(entry)})")
        elif before != entry:
            fields = [key for key in sorted(set(before) | set(entry)) if before.get(key) != entry.get(key)]
            lines.append(f"known deviation {case}: {', '.join(fields)} changed "
                         f"(entry sha256 {_short_hash(before)} -> {_short_hash(entry)})")
    for name in sorted(set(old["adapters"]) | set(new["adapters"])):
        before, now = old["adapters"].get(name), new["adapters"].get(name)
        if before is None:
            lines.append(f"adapter {name}: added ({now['path']}, sha256 {now['sha256'][:12]})")
        elif now is None:
            lines.append(f"adapter {name}: removed (was {before['path']})")
        elif now != before:
            lines.append(f"adapter {name}: {before['path']} (sha256 {before['sha256'][:12]}) -> "
                         f"{now['path']} (sha256 {now['sha256'][:12]})")
    lines += marker_changes(old.get("markers", []), new.get("markers", []))
    for entry, minimum in old["minimum_cases"].items():
        if entry in new["minimum_cases"] and new["minimum_cases"][entry] < minimum:
            lines.append(f"minimum_cases.{entry}: lowered from {minimum} to {new['minimum_cases'][entry]}")
    for name, before in old.get("environments", {}).items():
        now = new.get("environments", {}).get(name)
        if now != before:
            lines.append(f"[tool.extparity.gate].environments: {name} " + (
                "removed" if now is None else f"changed from {_canonical(before)} to {_canonical(now)}"))
    for key in sorted(set(old["settings"]) | set(new["settings"])):
        before, now = old["settings"].get(key), new["settings"].get(key)
        where = f"[tool.extparity.gate].{key}"
        if isinstance(now, list):  # an exception list: what it adds weakens the gate
            known = {_canonical(item) for item in before} if isinstance(before, list) else set()
            lines += [f"{where}: added {_shown(item)}" for item in now if _canonical(item) not in known]
        elif before is None and now is not None:
            lines.append(f"{where}: set to {_shown(now)}")
        elif before is not None and not isinstance(before, list) and now != before:
            lines.append(f"{where}: {_shown(before)} -> {'removed' if now is None else _shown(now)}")
    lines += shipped_changes(old, new)
    lines += fuzz_changes(old.get("fuzz"), new.get("fuzz", {}))
    if "coverage" in old and old["coverage"]["reference"] != new["coverage"]["reference"]:
        lines.append(f"[tool.extparity.coverage].reference: {_canonical(old['coverage']['reference'])} -> "
                     f"{_canonical(new['coverage']['reference'])}")
    lines += [f"check {name}: in the last release's gate, not in this one"
              for name in old.get("checks", []) if name not in new["checks"]]
    return lines


def shipped_changes(old: dict, new: dict) -> list[str]:
    """Each shipped file outside the verified modules added, removed or changed. A baseline
    older than this record pins nothing, so every such file shows as added."""
    lines = []
    before, now = old.get("shipped", {}), new["shipped"]
    was_verified, verified = old.get("verified", {}), new["verified"]
    for tree in sorted(set(before) | set(now)):
        pinned, pinning = before.get(tree, {}), now.get(tree, {})
        for rel in sorted(set(pinned) | set(pinning)):
            where = f"shipped file {tree}/{rel}"
            if rel not in pinned:
                lines.append(f"{where}: no longer a verified module (sha256 {pinning[rel]})"
                             if rel in was_verified.get(tree, []) else f"{where}: added (sha256 {pinning[rel]})")
            elif rel not in pinning:
                if rel not in verified.get(tree, []):  # a file that became verified is checked as one now
                    lines.append(f"{where}: removed (was sha256 {pinned[rel][:12]})")
            elif pinned[rel] != pinning[rel]:
                lines.append(f"{where}: changed (sha256 {pinned[rel][:12]} -> {pinning[rel]})")
    return lines


def fuzz_changes(old: dict | None, new: dict) -> list[str]:
    """Every change to what decides the gate's fuzz cases: a plugin's bytes, an entry's
    generators, a weight. Any change counts: fewer generators, a lighter weight or a plugin that
    generates less all shrink what the budget searches, and none of them shows in a verdict."""
    if old is None:  # a baseline older than this record: only the plugins can be compared, as added
        old = {"plugins": {}, "generators": new["generators"], "weights": new["weights"]}
    lines = []
    for ref in sorted(set(old["plugins"]) | set(new["plugins"])):
        before, now = old["plugins"].get(ref), new["plugins"].get(ref)
        where = f"fuzz plugin {ref}"
        if ref not in old["plugins"]:
            lines.append(f"{where}: added ({'sha256 ' + now if now else 'no such file'})")
        elif ref not in new["plugins"]:
            lines.append(f"{where}: removed")
        elif before != now:
            lines.append(f"{where}: changed (sha256 {(before or 'none')[:12]} -> {now or 'no such file'})")
    for entry in sorted(set(old["generators"]) & set(new["generators"])):
        if old["generators"][entry] != new["generators"][entry]:
            lines.append(f"[tool.extparity.fuzz].generators.{entry}: {_canonical(old['generators'][entry])} -> "
                         f"{_canonical(new['generators'][entry])}")
    for name in sorted(set(old["weights"]) | set(new["weights"])):
        before, now = old["weights"].get(name), new["weights"].get(name)
        if before != now:
            lines.append(f"[tool.extparity.fuzz].weights.{name}: " + (
                f"set to {_shown(now)}" if before is None else f"{_shown(before)} -> {'removed' if now is None else _shown(now)}"))
    return lines


def placeholder_reasons(project: Project) -> list[str]:
    """Each exception of ``[tool.extparity.gate]`` whose reason is still the one ``init`` or
    ``--suggest`` wrote: it names what a reviewer must confirm, so it says nothing was."""
    problems = []
    for key in DECLARED:
        for index, declared in enumerate(getattr(project.gate, key)):
            tail = placeholder(declared.reason)
            if tail is not None:
                shown = declared.what + (f" in {declared.where}" if declared.where else "")
                problems.append(f"[tool.extparity.gate].{key}[{index}] ({shown}): its reason is still the "
                                f"placeholder extparity wrote (\"... {tail}\"): say in your own words why it may be")
    return problems


class BaselineError(Exception):
    """A --baseline file that is not a gate result with a recorded policy; names the file."""


@dataclass(frozen=True)
class Baseline:
    name: str
    policy: dict
    case_ids: list[str]
    ok: bool


def load_baseline(path: Path | str) -> Baseline:
    try:
        document = read.load(path)
    except read.ResultError as error:
        raise BaselineError(str(error)) from None
    policy = document.get("gate", {}).get("policy") if isinstance(document.get("gate"), dict) else None
    keys = ("engines", "trees", "reference", "entries", "cases", "known_deviations", "adapters", "minimum_cases",
            "settings")
    if not (isinstance(policy, dict) and all(key in policy for key in keys)):
        raise BaselineError(f"{path}: records no gate policy (gate.policy): it must be the --json of "
                            f"`extparity gate` from the last release")
    if document["gate"].get("not_run"):
        raise BaselineError(f"{path}: a partial gate (--only; not run: {', '.join(document['gate']['not_run'])}) "
                            f"is no release's result: pass the --json of the last release's whole gate")
    return Baseline(Path(path).name, policy, [case["id"] for case in document["cases"]], document.get("ok") is True)


def judge(now: dict, case_ids: list[str], baseline: Baseline | None, acknowledged: Acknowledgements | None,
          placeholders: Sequence[str] = ()) -> tuple[list[str], str]:
    """The policy check's problems and its passing line: against ``baseline`` every change of
    ``now`` must be acknowledged; without one, every shipped file it trusts unreviewed."""
    problems = unbrowsed_trees(now) + list(placeholders)
    browsed = ", ".join(f"{tree} by {' and '.join(kinds)}" for tree, kinds in now["trees"].items() if kinds)
    acknowledged = acknowledged or Acknowledgements("")
    if baseline is None:
        found = trusted_unreviewed(now)
        stale = "which is not among the files this first release trusts unreviewed (no --baseline)"
    else:
        if not baseline.ok:
            problems.append(f"baseline {baseline.name}: its gate did not pass, so it is no release to compare with")
        if case_ids_hash(baseline.case_ids) != baseline.policy["cases"]["sha256"]:
            problems.append(f"baseline {baseline.name}: its cases are not the ones its policy records (edited?)")
        found = changes(baseline.policy, now, baseline.case_ids, case_ids)
        stale = f"which is no policy change against {baseline.name}"
    problems += [f"acknowledgements: {p}" for p in acknowledged.problems]
    problems += [f"not acknowledged: {line}" for line in found if line not in acknowledged.changes]
    problems += [f"{acknowledged.name}[{index}]: acknowledges {line!r}, {stale}: remove the entry"
                 for line, index in acknowledged.changes.items() if line not in found]
    if baseline is None:
        files = {tree: list(pinned) for tree, pinned in now["shipped"].items() if pinned}
        listed = "; ".join(f"{tree}: {', '.join(names)}" for tree, names in files.items())
        total = sum(map(len, files.values()))
        return problems, (f"every tree is loaded by a browser ({browsed}); no --baseline: "
                          + (f"{count(total, 'shipped file')} outside the verified modules trusted unreviewed, "
                             f"each acknowledged in {acknowledged.name} ({listed})" if total
                             else "every shipped file is a verified module"))
    accepted = sum(line in acknowledged.changes for line in found)
    return problems, (f"every tree is loaded by a browser ({browsed}); against {baseline.name}: "
                      + (f"{accepted} policy changes, each acknowledged in {acknowledged.name}" if found
                         else "no policy change"))


def trusted_unreviewed(policy: dict) -> list[str]:
    """A first release's lines: every shipped file outside the verified modules, with its bytes."""
    return [f"trusted unreviewed: {tree}/{rel} (sha256 {sha})"
            for tree, pinned in policy["shipped"].items() for rel, sha in pinned.items()]
