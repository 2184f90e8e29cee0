"""Does a verdict meet a case's expectation?

Expectations are partial on purpose: a narration case asserts that nothing runs and why, not
every span. Listed keys must match; a listed list must match in length and order. For the list
keys an entry declares in `expect.items` (the bundled parse entry: `calls` -> `name`,
`rejected` -> `reason`), an item given as a bare string names that field, and an item given as
an object must match on the keys it lists; other values are compared whole.
"""

from __future__ import annotations

import json
from typing import Any, Mapping

from ..project.words import shortened


def mismatches(list_items: Mapping[str, str], expect: dict, verdict_text: str) -> list[str]:
    """Human-readable differences between `expect` and the canonical verdict (empty: it meets)."""
    try:
        verdict = json.loads(verdict_text)
    except ValueError:
        return ["verdict is not JSON"]
    if not isinstance(verdict, dict):
        return ["verdict is not an object"]
    found = []
    for key, wanted in expect.items():
        actual = verdict.get(key)
        if key in list_items:
            found.extend(_list_mismatches(key, list_items[key], wanted, actual))
        elif not _same(wanted, actual):
            found.append(f"{key}: expected {_show(wanted)}, got {_show(actual)}")
    return found


def _list_mismatches(key: str, item_key: str, wanted: list, actual: Any) -> list[str]:
    if not isinstance(actual, list):
        return [f"{key}: expected a list, got {_show(actual)}"]
    if len(wanted) != len(actual):
        summary = [item.get(item_key) if isinstance(item, dict) else item for item in actual]
        return [f"{key}: expected {len(wanted)} ({_show(wanted)}), got {len(actual)} ({_show(summary)})"]
    found = []
    for index, (want, got) in enumerate(zip(wanted, actual)):
        want = {item_key: want} if isinstance(want, str) else want
        for field, value in want.items():
            if not isinstance(got, dict) or not _same(value, got.get(field)):
                shown = got.get(field) if isinstance(got, dict) else got
                found.append(f"{key}[{index}].{field}: expected {_show(value)}, got {_show(shown)}")
    return found


def _same(a: Any, b: Any) -> bool:
    """JSON equality: types kept apart (true is not 1), numbers by value (1 equals 1.0), objects
    without regard to key order."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[key], b[key]) for key in a)
    return type(a) is type(b) and a == b


def _show(value: Any) -> str:
    return shortened(json.dumps(value, ensure_ascii=True), 160)
