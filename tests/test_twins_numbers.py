"""The JS twins' number reading and formatting in QuickJS, bit for bit against the reference.

QuickJS-ng 0.17 misrounds near-midpoint literals of about 39 or more significant digits and prints
some doubles with 17 digits where 16 round-trip, so json-core.js converts in both directions
itself (SPEC.md sections 2 and 3). Each tree's json-core.js is linked and loaded as the harness
loads it; generated literals go through `readNumber` and generated doubles through
`formatNumber`. The same check in V8 and SpiderMonkey, at 300,000 of each, is
benchmarks/differential_numbers.py.
"""

from __future__ import annotations

import json
import math
import random
import sys
from pathlib import Path

import pytest
import quickjs

from extparity.project.config import load_project
from extparity.subject.linker import PRELUDE, REGISTRY, module_graph
from toolcalls import json_core as jc
from toolcalls.json_core import JsonReject

sys.path.insert(0, str(Path(__file__).parent.parent / "fixtures" / "generators"))
import _numbers  # noqa: E402

PROJECT = load_project()
CORE = "src/agent/json-core.js"

HELPERS = """
globalThis.__numbers = (function () {
  const core = %s;
  const view = new DataView(new ArrayBuffer(8));
  function hex(x) {
    view.setFloat64(0, x);
    return view.getUint32(0).toString(16).padStart(8, "0") + view.getUint32(4).toString(16).padStart(8, "0");
  }
  function fromHex(h) {
    view.setUint32(0, parseInt(h.slice(0, 8), 16));
    view.setUint32(4, parseInt(h.slice(8), 16));
    return view.getFloat64(0);
  }
  return {
    read: (list) => list.map((s) => {
      const [value, end] = core.readNumber(s, 0, s.length);
      if (value instanceof core.JsonReject) return "!" + value.reason;
      return end === s.length ? hex(value) : "end " + end;
    }).join(","),
    // formatNumber(x), a space, and the engine's own String(x)
    format: (hexes) => hexes.map((h) => core.formatNumber(fromHex(h)) + " " + String(fromHex(h))).join(","),
    // the exact BigInt search that formatNumber falls back on: digits and n
    exact: (hexes) => hexes.map((h) => core.shortestDigits(Math.abs(fromHex(h))).join(" ")).join(","),
    // the round-trip search started from 17 digits, whatever the engine's String(x) says
    from17: (hexes) => hexes.map((h) => core.shortestByRoundTrip(Math.abs(fromHex(h)), 17).join(" ")).join(","),
  };
})();
""" % f"{REGISTRY}[{json.dumps(CORE)}]"


@pytest.fixture(scope="module", params=["chrome", "firefox"])
def twin(request):
    ctx = quickjs.Context()
    ctx.set_time_limit(300)
    ctx.eval(PRELUDE)
    for module in module_graph(PROJECT.trees[request.param], [entry.module for entry in PROJECT.entries.values()]):
        ctx.module(module.module)
        while ctx.execute_pending_job():
            pass
    ctx.eval(HELPERS)
    return ctx


def reference_read(literal):
    """The reference's reading of a literal: the double's bits in hex, or "!" and the reason."""
    value, _ = jc.read_number(literal, 0, len(literal))
    if isinstance(value, JsonReject):
        return "!" + value.reason
    return "%016x" % _numbers.double_to_bits(float(value))


def shortest(x):
    """The reference's shortest digits of |x| > 0 and n with |x| ~ 0.digits * 10^n, from repr."""
    mantissa, _, exponent = repr(abs(x)).partition("e")
    whole, _, fraction = mantissa.partition(".")
    digits = (whole + fraction).lstrip("0")
    stripped = digits.rstrip("0")
    return stripped, int(exponent or 0) - len(fraction) + len(digits)


def run_batches(ctx, method, items, size=1000):
    out = []
    for k in range(0, len(items), size):
        out += ctx.eval(f"__numbers.{method}({json.dumps(items[k:k + size])})").split(",")
    return out


def test_twin_reads_near_midpoint_literals_like_the_reference(twin):
    rng = random.Random(7)
    literals = [lit for lit, _ in _numbers.near_midpoint_literals(rng, 6000) + _numbers.overflow_literals()]
    literals += [_numbers.spell(str(rng.randrange(1, 10**19)), rng.randrange(-345, 310), rng.randrange(4))
                 for _ in range(2000)]  # short literals: the engine's own conversion
    expected = [reference_read(s) for s in literals]
    got = run_batches(twin, "read", literals)
    wrong = [(s[:60], g, e) for s, g, e in zip(literals, got, expected) if g != e]
    assert wrong == [], f"{len(wrong)} of {len(literals)} literals differ, e.g. {wrong[:3]}"


def test_twin_reads_literals_at_the_edge_of_its_arithmetic_path(twin):
    """json-core.js reads a literal whose digits make an integer of at most 2**53 - 1, scaled by
    10**-22 to 10**22, with one IEEE operation (Clinger's fast path); digits just past 2**53 or a
    scale just past 22 must take the other path. Each spelling changes the scale the digits get."""
    rng = random.Random(10)
    literals = []
    for _ in range(6000):
        digits = str(2**53 + rng.randrange(-3000, 3000) * rng.choice((1, 7, 1001)))
        literals.append(_numbers.spell(digits, rng.randrange(-40, 25), rng.randrange(4), rng.random() < 0.5))
    expected = [reference_read(s) for s in literals]
    got = run_batches(twin, "read", literals)
    wrong = [(s, g, e) for s, g, e in zip(literals, got, expected) if g != e]
    assert wrong == [], f"{len(wrong)} of {len(literals)} literals differ, e.g. {wrong[:3]}"


def test_twin_formats_doubles_like_the_reference(twin):
    doubles = _numbers.random_doubles(random.Random(8), 30000)
    got = [item.partition(" ")[0] for item in run_batches(twin, "format", ["%016x" % _numbers.double_to_bits(x) for x in doubles], 5000)]
    wrong = [(x, g, jc.es_number(x)) for x, g in zip(doubles, got) if g != jc.es_number(x)]
    assert wrong == [], f"{len(wrong)} of {len(doubles)} doubles differ, e.g. {wrong[:3]}"
    assert any(math.ldexp(1, -1074) == abs(x) for x in doubles)
    assert sum(map(_numbers.shortest_is_a_tie, doubles)) >= 50  # the even one of two equally near


@pytest.mark.parametrize("method", ["exact", "from17"])
def test_twin_shortest_digits_by_each_search(twin, method):
    """The exact fallback, and the round-trip search when String(x) is too long (as QuickJS-ng's
    sometimes is), each find the reference's digits."""
    doubles = [x for x in _numbers.random_doubles(random.Random(9), 6000) if x != 0]
    got = run_batches(twin, method, ["%016x" % _numbers.double_to_bits(x) for x in doubles], 2000)
    wrong = [(x, g, shortest(x)) for x, g in zip(doubles, got) if g != "%s %d" % shortest(x)]
    assert wrong == [], f"{len(wrong)} of {len(doubles)} doubles differ, e.g. {wrong[:3]}"
    assert sum(map(_numbers.shortest_is_a_tie, doubles)) >= 20  # the even one of two equally near
