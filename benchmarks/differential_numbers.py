"""Differential check of the JS twin's number reading and number formatting, in every engine.

    .venv/bin/python benchmarks/differential_numbers.py [--read 300000] [--format 300000] [--seed 1]

* read: hard literals (near-midpoint literals of 17 to 800 significant digits, both signs and
  exponent signs, subnormals, around 2**53, around the overflow to Infinity, plus short ones)
  through json-core.js `readNumber`, compared bit for bit with the Python reference
  (`toolcalls.json_core.read_number`, which uses float()) and with an exact Fraction oracle.
* format: finite doubles of every kind through json-core.js `formatNumber`, compared with the
  Python reference (`toolcalls.json_core.es_number`) and, in V8, with V8's own `String(x)`.

Engines: QuickJS-ng always; V8 (mini-racer) and SpiderMonkey (pythonmonkey) when installed (see
benchmarks/js_engines.py). Prints one line per engine and check; exits 1 on any mismatch.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "fixtures" / "generators"))
sys.path.insert(0, str(HERE.parent / "py_src"))  # the bundled reference (not in the wheel)
sys.path.insert(0, str(HERE.parent / "tests"))

import _numbers  # noqa: E402
import js_engines  # noqa: E402
from extparity.project.config import load_project  # noqa: E402
from test_twins_numbers import HELPERS, reference_read  # noqa: E402  (the same JS helpers and reading)
from toolcalls import json_core as jc  # noqa: E402


def oracle_read(literal: str) -> str:
    value = _numbers.correctly_rounded(literal)
    if math.isinf(value):
        return "!number-out-of-range"
    return "%016x" % _numbers.double_to_bits(value)


def literals(seed: int, count: int) -> list[str]:
    rng = random.Random(seed)
    out = [literal for literal, _ in _numbers.overflow_literals()]
    out += [literal for literal, _ in _numbers.near_midpoint_literals(rng, count * 9 // 10)]
    while len(out) < count:  # short literals: the fast path
        digits = str(rng.randrange(1, 10 ** rng.randrange(1, 20)))
        out.append(_numbers.spell(digits, rng.randrange(-345, 310), rng.randrange(4), rng.random() < 0.3))
    return out[:count]


def batches(items, size):
    for k in range(0, len(items), size):
        yield items[k : k + size]


def check_read(engines, items) -> bool:
    started = time.perf_counter()
    expected = [reference_read(s) for s in items]
    oracle = [oracle_read(s) for s in items]
    wrong_reference = sum(a != b for a, b in zip(expected, oracle))
    print(f"read   python reference vs exact oracle: {len(items)} literals, {wrong_reference} differ "
          f"({time.perf_counter() - started:.1f} s)")
    ok = wrong_reference == 0
    for name, run in engines.items():
        started = time.perf_counter()
        got = []
        for batch in batches(items, 2000):
            got += run(f"__numbers.read({json.dumps(batch)})").split(",")
        wrong = [(s, g, e) for s, g, e in zip(items, got, expected) if g != e]
        print(f"read   {name:12} {len(items)} literals, {len(wrong)} differ from the reference "
              f"({time.perf_counter() - started:.1f} s)")
        for s, g, e in wrong[:5]:
            print(f"         {s[:70]}{'...' if len(s) > 70 else ''}: got {g}, want {e}")
        ok = ok and not wrong
    return ok


def check_format(engines, doubles) -> bool:
    expected = [jc.es_number(x) for x in doubles]
    ties = sum(map(_numbers.shortest_is_a_tie, doubles))
    print(f"format {len(doubles)} doubles, {ties} of them halfway between their two nearest shortest decimals")
    hexes = ["%016x" % _numbers.double_to_bits(x) for x in doubles]
    ok = True
    for name, run in engines.items():
        started = time.perf_counter()
        got, native = [], []
        for batch in batches(hexes, 5000):
            for item in run(f"__numbers.format({json.dumps(batch)})").split(","):
                text, _, string = item.partition(" ")
                got.append(text)
                native.append(string)
        wrong = [(x, g, e) for x, g, e in zip(doubles, got, expected) if g != e]
        native_differs = sum(n != e for n, e in zip(native, expected))
        print(f"format {name:12} {len(doubles)} doubles, {len(wrong)} differ from the reference; "
              f"the engine's own String(x) differs on {native_differs} "
              f"({time.perf_counter() - started:.1f} s)")
        for x, g, e in wrong[:5]:
            print(f"         {x!r}: got {g}, want {e}")
        ok = ok and not wrong
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--read", type=int, default=300_000, help="literals to read (0 skips)")
    parser.add_argument("--format", type=int, default=300_000, help="doubles to format (0 skips)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--engines", default="quickjs,v8,spidermonkey")
    args = parser.parse_args()
    engines = js_engines.available(load_project(), tuple(args.engines.split(",")))
    for run in engines.values():
        run(HELPERS)
    print("engines:", ", ".join(engines))
    ok = True
    if args.read:
        ok = check_read(engines, literals(args.seed, args.read)) and ok
    if args.format:
        ok = check_format(engines, _numbers.random_doubles(random.Random(args.seed), args.format)) and ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
