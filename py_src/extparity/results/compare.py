"""What changed between two runs: the release's behaviour change, per case and engine.

Two JSON results (``read``) are compared verdict by verdict, for every case and engine
both hold. A changed verdict is explained in the subject's terms, as far as the config says
them: the entry's ``executes`` key names the list of calls that would run, and its
``expect.items`` name the field that identifies an item of each list (the bundled parse entry:
``calls`` by ``name``, ``rejected`` by ``reason``). So a change is one of

- ``now-executes``: a call that did not run before runs now (the kind a gate stops on),
- ``no-longer-executes``: a call that ran before does not run now,
- ``changed-call``: the same call runs with other fields (its arguments, say),
- ``changed-items``: another declared list names other items (rejection reasons, say),
- ``changed-verdict``: anything else (top-level keys, a verdict that is not JSON).

Calls are matched by their identifying field and occurrence (the second ``click`` of the old
verdict against the second ``click`` of the new one), not by position, so one new call does
not make every later call look changed.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any, Mapping

from ..corpus.deviations import Deviation
from ..project.words import shortened
from .read import engine_names, verdicts

NOW_EXECUTES = "now-executes"
NO_LONGER_EXECUTES = "no-longer-executes"
CHANGED_CALL = "changed-call"
CHANGED_ITEMS = "changed-items"
CHANGED_VERDICT = "changed-verdict"
KINDS = (NOW_EXECUTES, NO_LONGER_EXECUTES, CHANGED_CALL, CHANGED_ITEMS, CHANGED_VERDICT)


@dataclass(frozen=True)
class Change:
    case: str
    engine: str
    kind: str  # one of KINDS
    detail: str  # in the subject's terms: "click", "arguments: {...} -> {...}", "rejected: [...] -> [...]"


@dataclass
class Comparison:
    changes: list[Change] = field(default_factory=list)
    only_old_cases: list[str] = field(default_factory=list)
    only_new_cases: list[str] = field(default_factory=list)
    only_old_engines: list[str] = field(default_factory=list)
    only_new_engines: list[str] = field(default_factory=list)
    uncompared: Counter = field(default_factory=Counter)  # (engine, "OLD"/"NEW") -> cases without a verdict there

    def not_compared_lines(self) -> list[str]:
        """What could not be compared, one line per cause: a gate cannot vouch for it."""
        lines = [f"engine {name}: only in OLD, not compared" for name in self.only_old_engines]
        lines += [f"engine {name}: only in NEW, not compared" for name in self.only_new_engines]
        lines += [f"{name}: no verdict in {side}: {count} cases not compared"
                  for (name, side), count in sorted(self.uncompared.items())]
        return lines


def behaviour_changes(old_doc: dict, new_doc: dict) -> list[Change]:
    """Every change of verdict from ``old_doc`` to ``new_doc``, in the new run's case and
    engine order."""
    return compare(old_doc, new_doc).changes


def compare(old_doc: dict, new_doc: dict) -> Comparison:
    result = Comparison()
    old_cases = {case["id"]: case for case in old_doc["cases"]}
    new_ids = {case["id"] for case in new_doc["cases"]}
    old_engines, new_engines = engine_names(old_doc), engine_names(new_doc)
    result.only_old_engines = [name for name in old_engines if name not in new_engines]
    result.only_new_engines = [name for name in new_engines if name not in old_engines]
    result.only_old_cases = [case_id for case_id in old_cases if case_id not in new_ids]
    entries = {**old_doc.get("entries", {}), **new_doc.get("entries", {})}
    shared = [name for name in new_engines if name in old_engines]
    for new_case in new_doc["cases"]:
        old_case = old_cases.get(new_case["id"])
        if old_case is None:
            result.only_new_cases.append(new_case["id"])
            continue
        before, after = verdicts(old_case), verdicts(new_case)
        entry = entries.get(new_case.get("fn"), {})
        for name in shared:
            if name not in old_case["cells"] and name not in new_case["cells"]:
                continue
            if name not in after or name not in before:
                result.uncompared[(name, "NEW" if name not in after else "OLD")] += 1
                continue
            if before[name] != after[name]:
                result.changes += [Change(new_case["id"], name, kind, detail)
                                   for kind, detail in explain(before[name], after[name], entry)]
    return result


def explain(old_text: str, new_text: str, entry: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(kind, detail) pairs saying how one verdict became another."""
    try:
        old, new = json.loads(old_text), json.loads(new_text)
    except ValueError:
        return [(CHANGED_VERDICT, f"{shortened(old_text, 120)} -> {shortened(new_text, 120)}")]
    if not (isinstance(old, dict) and isinstance(new, dict)):
        return [(CHANGED_VERDICT, f"{shortened(old_text, 120)} -> {shortened(new_text, 120)}")]
    items: dict[str, str] = dict(entry.get("items") or {})
    executes = entry.get("executes")
    found: list[tuple[str, str]] = []
    explained: set[str] = set()
    if executes and isinstance(old.get(executes), list) and isinstance(new.get(executes), list):
        calls = _calls(old[executes], new[executes], items.get(executes))
        if calls:  # else only the order changed: a changed-verdict below
            found += calls
            explained.add(executes)
    for key, id_field in items.items():
        if key == executes or not (isinstance(old.get(key), list) and isinstance(new.get(key), list)):
            continue
        before, after = _names(old[key], id_field), _names(new[key], id_field)
        if before != after:
            found.append((CHANGED_ITEMS, f"{key}: {_short(before)} -> {_short(after)}"))
            explained.add(key)
    rest = [key for key in sorted(set(old) | set(new)) if key not in explained and old.get(key) != new.get(key)]
    if rest:
        found.append((CHANGED_VERDICT, "; ".join(f"{key}: {_short(old.get(key))} -> {_short(new.get(key))}" for key in rest)))
    return found


def _identity(item: Any, id_field: str | None) -> str:
    if id_field and isinstance(item, dict) and id_field in item:
        return item[id_field] if isinstance(item[id_field], str) else json.dumps(item[id_field])
    return json.dumps(item, sort_keys=True)


def _names(items: list, id_field: str) -> list:
    return [item.get(id_field) if isinstance(item, dict) else item for item in items]


def _keyed(items: list, id_field: str | None) -> dict[tuple[str, int], Any]:
    """Items by (identity, occurrence): the second `click` is ("click", 1)."""
    seen: Counter = Counter()
    keyed = {}
    for item in items:
        identity = _identity(item, id_field)
        keyed[(identity, seen[identity])] = item
        seen[identity] += 1
    return keyed


def _calls(old: list, new: list, id_field: str | None) -> list[tuple[str, str]]:
    before, after = _keyed(old, id_field), _keyed(new, id_field)
    found = [(NOW_EXECUTES, _label(key)) for key in after if key not in before]
    found += [(NO_LONGER_EXECUTES, _label(key)) for key in before if key not in after]
    for key in after:
        if key in before and before[key] != after[key]:
            old_item, new_item = before[key], after[key]
            if isinstance(old_item, dict) and isinstance(new_item, dict):
                fields = [f for f in sorted(set(old_item) | set(new_item)) if old_item.get(f) != new_item.get(f)]
                shown = "; ".join(f"{f}: {_short(old_item.get(f))} -> {_short(new_item.get(f))}" for f in fields)
            else:
                shown = f"{_short(old_item)} -> {_short(new_item)}"
            found.append((CHANGED_CALL, f"{_label(key)}: {shown}"))
    return found


def _label(key: tuple[str, int]) -> str:
    identity, occurrence = key
    return identity if occurrence == 0 else f"{identity} (#{occurrence + 1})"


def _short(value: Any) -> str:
    return shortened(json.dumps(value, ensure_ascii=True, sort_keys=True), 120)


def change_lines(changes: list[Change]) -> list[str]:
    """One line per case, kind and detail, naming every engine that changed that way."""
    engines: dict[tuple[str, str, str], list[str]] = defaultdict(list)
    for change in changes:
        engines[(change.case, change.kind, change.detail)].append(change.engine)
    return [f"{case} [{', '.join(names)}] {kind}: {detail}" for (case, kind, detail), names in engines.items()]


def unacknowledged_new_calls(changes: list[Change], acknowledged: Mapping[str, Deviation]) -> tuple[list[Change], list[str]]:
    """The now-executes changes no acknowledgement covers, and acknowledgements that cover
    none (stale: the change they acknowledge is not there, so the entry must go)."""
    new_calls = [change for change in changes if change.kind == NOW_EXECUTES]
    open_changes = [c for c in new_calls if not (c.case in acknowledged and c.engine in acknowledged[c.case].engines)]
    covered = {(c.case, c.engine) for c in new_calls}
    stale = [f"{ack.case} [{engine}]: acknowledged, but it executes no new call (remove the entry)"
             for ack in acknowledged.values() for engine in ack.engines if (ack.case, engine) not in covered]
    return open_changes, stale
