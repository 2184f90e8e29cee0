"""Worst-case inputs next to a typical one, measured side by side in one run.

The parser and the repair promise linear time with no restart cap, so adversarial inputs at the
caps must cost about what a typical input of the same length costs: 10,000 UTF-16 units for
parse, 100,000 for repair. This prints, per engine, the median time of each input and its ratio
to the typical input of the same function. Engines: the Python reference in process, and the
Chrome tree's JS modules (linked by the harness's own linker) in QuickJS-ng and, when mini-racer
is installed, in V8 (see js_engines.py).

    .venv/bin/python benchmarks/worst_case.py [--repeat 15]

The Python reference is also timed next to its floor, the standard library's own work on the
same text (`floor ms`, `x floor` = the reference's time / the floor's, the two timed
alternately): for repair, `json.loads` + `json.dumps` of the text (of the completed text when the
verdict repairs it); for parse, a regular-expression scan of the text for the units a candidate
can begin, end or be quoted by, and `json.loads` of each candidate (each balanced top-level
object the scanner finds, each `<tool_call>` body, and the whole text when it is an array).

In V8, each parse input is also timed, alternately with the twin, in a regular-expression
extractor as peers write it (`peer_extractor.js`: `<tool_call>` bodies and own-line JSON through
`JSON.parse`): the "extractor" column, and the twin's time over it on the same text; and the
twin's balanced-object scan alone (SPEC.md 4, which every parser of the contract runs over the
whole text) over the extractor's, which bounds the rows whose candidates are thousands.

With `--against CHECKOUT` (another checkout of this project, e.g. `git worktree add` or `git
archive` of an earlier commit), each input is instead timed in that checkout's reference and
tree and in this one, alternately, and the table gives both times and the change: a before and
after measured side by side, so the load of the machine moves both alike.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import random
import re
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "fixtures" / "generators"))
sys.path.insert(0, str(HERE.parent / "py_src"))  # the bundled reference (not in the wheel)

import _numbers  # noqa: E402
import js_engines  # noqa: E402
from extparity.project.config import load_project  # noqa: E402
from extparity.subject.linker import REGISTRY  # noqa: E402
from toolcalls import parse_tool_calls_canonical, repair_arguments_canonical  # noqa: E402
from toolcalls.json_core import scan_objects  # noqa: E402

CALL = '{"name":"click","arguments":{"selector":"#save","options":{"scroll":true}}}'
ALLOWED = ["click", "navigate", "read_page"]
PARSE_UNITS, REPAIR_UNITS = 10_000, 100_000
EXTRACTOR = HERE / "peer_extractor.js"


def fit(text: str, units: int = PARSE_UNITS) -> str:
    """Pad with spaces or cut to exactly `units` UTF-16 units (the inputs here are ASCII)."""
    return (text + " " * units)[:units]


def typical() -> str:
    paragraph = ("The page lists three buttons; the user asked to save the draft, so I will press "
                 "the one labelled Save and then read the page again to confirm.\n")
    body = paragraph * 60
    return fit(body[: PARSE_UNITS - 3 * (len(CALL) + 1)] + ("\n" + CALL) * 3)


def parse_inputs() -> dict[str, str]:
    tail = "\n" + CALL
    return {
        "typical prose + 3 calls": typical(),
        "typical 110 units: a line + 1 call": fit("I will press Save now.\n" + CALL, 110),
        "10,000 '{'": "{" * 10_000,
        "9,9xx stray '{' then a call": "{" * (10_000 - len(tail)) + tail,
        "'{\"' pairs (strings inside braces)": fit('{"' * 5_000),
        "'{\"a\":\"\\n' lines (strings broken by LF)": fit('{"a":"\n' * 1_500),
        "5,000 '{}' on one line": "{}" * 5_000,
        "3,333 '{}' lines": fit("{}\n" * 3_333),
        "1,3xx distinct '{ }' lines": fit("\n".join(distinct_empty_objects())),
        "588 own-line calls": fit("\n".join(['{"name":"click"}'] * 588)),
        "'<tool_call>' holding 3,000 '{}'": fit("<tool_call>[" + ",".join(["{}"] * 3_000) + "]</tool_call>"),
        "whole-response array of 3,000 '{}'": fit("[" + ",".join(["{}"] * 3_000) + "]"),
        "900 '<tool_call>' openers": fit("<tool_call>" * 909),
        "'call:x{}' repeated": fit("call:x{}" * 1_250),
        "'call:x{}' lines": fit("call:x{}\n" * 1_111),
        "1,000 '<function=' openers": fit("<function=a>" * 833),
        "'```\\n' fence lines": fit("```\n" * 2_500),
        "<think> then 10k of braces": fit("<think>" + "{" * 9_990),
        "whole-response array of 5,000 '1', unclosed": fit("[" + ",".join(["1"] * 5_000)),
    }


def distinct_empty_objects():
    """Every empty object with only JSON whitespace inside, shortest first: no two alike."""
    out, inside = [], [""]
    while sum(len(o) + 1 for o in out) < PARSE_UNITS:
        out.extend("{" + ws + "}" for ws in inside)
        inside = [ws + c for ws in inside for c in " \t\r\n"]
    return out


def array_of(rng: random.Random, make) -> str:
    """Arguments whose one member is an array of `make(rng)` values, cut to the repair cap and closed."""
    items, size = [], 10
    while size < REPAIR_UNITS - 40:
        items.append(make(rng))
        size += len(items[-1]) + 1
    return fit('{"n":[' + ",".join(items) + "]}", REPAIR_UNITS)


def repair_inputs() -> dict[str, str]:
    rng = random.Random(1)
    words = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor ".split()
    text = " ".join(rng.choice(words) for _ in range(REPAIR_UNITS // 5))
    return {
        "typical 100,000-unit arguments": fit('{"path":"notes.txt","text":"' + text[: REPAIR_UNITS - 40] + '"}', REPAIR_UNITS),
        "'[' x 100,000": "[" * REPAIR_UNITS,
        "99,99x-digit number": '{"n": ' + "9" * (REPAIR_UNITS - 6),
        "99,99x closers at the tail": fit('{"a":1}' + "}" * (REPAIR_UNITS - 8), REPAIR_UNITS),
        "17-digit floats in [0, 1)": array_of(rng, lambda r: "0.%017d" % r.randrange(10**16, 10**17)),
        "17-digit floats, exponents +-300": array_of(rng, lambda r: "%.16e" % (r.random() * 10.0 ** r.randrange(-300, 300))),
        "near-midpoint 20-digit literals": array_of(rng, near_midpoint_literal),
        "3,000 '{}' in an array": fit('{"a":[' + ",".join(["{}"] * 3_000) + "]}", REPAIR_UNITS),
        # Many short values: each is read, checked and written on its own, where the typical
        # input's one long string goes at regular-expression speed.
        "50,000 '1' in an array": array_of(rng, lambda r: "1"),
        "25,000 '1.5' in an array": array_of(rng, lambda r: "1.5"),
        # Distinct values, as an attacker would send: nothing an engine caches per value helps.
        "11,6xx distinct short decimals": array_of(rng, lambda r: repr(r.randrange(1, 10**6) / 10 ** r.randrange(1, 9))),
        "20,000 '1e-7' in an array": array_of(rng, lambda r: "1e-7"),
        # Written positionally by ECMAScript, with an exponent by Python's repr: rewritten.
        "20,000 '1e-5' in an array": array_of(rng, lambda r: "1e-5"),
        "14,2xx '1.5e17' in an array": array_of(rng, lambda r: "1.5e17"),
        "25,000 '\"a\"' in an array": array_of(rng, lambda r: '"a"'),
        "25,000 '[1]' in an array": array_of(rng, lambda r: "[1]"),
        "12,5xx '{\"a\":1}' in an array": array_of(rng, lambda r: '{"a":1}'),
        # Nested values, a repair per value, and a failure after many values: what a shortcut for
        # flat values or for accepted text alone would leave slow.
        "10,000 '{\"a\":[1]}' in an array": array_of(rng, lambda r: '{"a":[1]}'),
        "12,5xx '[[[1]]]' in an array": array_of(rng, lambda r: "[[[1]]]"),
        "9,99x '{\"a\":[1]}', cut short": '{"n":[' + ",".join(['{"a":[1]}'] * 9_990) + ',{"a":[1',
        "20,000 '[1,]' (refused at the 65th comma)": array_of(rng, lambda r: "[1,]"),
        "16,6xx '\"a\\n\"' (an escape each)": array_of(rng, lambda r: '"a\\n"'),
        "25,000 '[1]', then a duplicate key": fit('{"n":[' + ",".join(["[1]"] * 24_990) + '],"n":0}', REPAIR_UNITS),
    }


def near_midpoint_literal(rng: random.Random) -> str:
    """20 significant digits just past the midpoint after a random double: the exact path."""
    x = _numbers.bits_to_double(rng.getrandbits(62) | (1 << 61))
    digits, exponent = _numbers.midpoint_literals(x, 20)[1]
    return _numbers.spell(digits, exponent, 0)


# The floor's scan: one regular-expression pass stopping at each unit a candidate can begin
# (`{`, `[`, `<`, a fence's backtick), end or be quoted by; its tag bodies, found the same way.
FLOOR_SCAN = re.compile(r'[{}\[\]<`"\n]')
FLOOR_TAG_BODY = re.compile(r"<tool_call>(.*?)</tool_call>", re.S)


def python_floor(fn: str, arguments: tuple):
    """The standard library's own work on the same text: what the Python reference is measured
    against (issue 26). The candidates and the completed text are found before the timing."""
    if fn == "repair":
        verdict = json.loads(repair_arguments_canonical(arguments[0]))
        texts = [completed_text(arguments[0], verdict["actions"])]
        scan = None
    else:
        text = arguments[0]
        texts = [text[start:end] for start, end in scan_objects(text, 0, len(text))]
        texts += FLOOR_TAG_BODY.findall(text)
        if text.lstrip(" \t\n\r").startswith("["):
            texts.append(text)
        scan = FLOOR_SCAN.findall

    def floor():
        if scan is not None:
            scan(arguments[0])
        for text in texts:
            try:
                value = json.loads(text)
            except (ValueError, RecursionError):  # a refused text costs its failed read
                continue
            if fn == "repair":
                json.dumps(value)

    return floor


def completed_text(raw: str, actions: list) -> str:
    """`raw` with a repair verdict's actions applied (the inputs here are ASCII: units are
    characters)."""
    kept, i = [], 0
    for action in actions:
        kept.append(raw[i : action["at"]])
        i = action["at"] + (len(action["text"]) if action["op"] == "delete" else 0)
    kept.append(raw[i:])
    return "".join(kept) + "".join(a["text"] for a in actions if a["op"] == "append")


class JsCall:
    """One call of a JS function, timed as `repeats` calls in one eval: an eval costs V8
    (mini-racer) about 0.2 ms of its own, as much as a typical parse, so a call is timed as the
    mean of as many as take about 5 ms (at most 1,000)."""

    def __init__(self, run, call: str):
        self.run, self.call = run, call
        started = time.process_time()
        self.loop(20)
        once = (time.process_time() - started) / 20
        self.repeats = max(1, min(1000, int(0.005 / max(once, 1e-9))))

    def loop(self, count: int):
        return self.run(f"for (let k = 0; k < {count}; k += 1) {self.call}; 0")

    def __call__(self):
        return self.loop(self.repeats)


def paired_medians(typical_call, call, repeat: int) -> tuple[float, float]:
    """Median times of the typical input and of `call`, timed alternately so that both see the
    same machine load; the ratio of the two is what the table reports. Time is this process's
    CPU time (every engine runs in process; V8's threads are counted too), so other work on the
    machine inflates it far less than wall time."""
    typical_call(), call()  # warm up (JIT, caches)
    typical_samples, samples = [], []
    for _ in range(repeat):
        for target, out in ((typical_call, typical_samples), (call, samples)):
            started = time.process_time()
            target()
            out.append((time.process_time() - started) / getattr(target, "repeats", 1))
    return statistics.median(typical_samples), statistics.median(samples)


def reference_in(checkout: Path):
    """The Python reference of another checkout, imported under a name of its own."""
    package = checkout / "py_src" / "toolcalls"
    spec = importlib.util.spec_from_file_location("toolcalls_against", package / "__init__.py", submodule_search_locations=[str(package)])
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--only", default="", help="only inputs whose function or name contains this")
    parser.add_argument("--against", type=Path, help="another checkout: time each input there and here, side by side")
    parser.add_argument("--js", default="quickjs,v8", help="JS engines, comma-separated: quickjs, v8, spidermonkey")
    args = parser.parse_args()
    config = load_project()
    engines = js_engines.available(config, tuple(args.js.split(",")))
    entries = {fn: config.entries[fn] for fn in ("parse", "repair")}

    stored = {}

    def js_timer(run, fn, arguments, callee=None):
        # Each input is stored once under its own name, so the timing covers the call, not
        # reading a 100 KB literal. Reading one unit of the verdict flattens it if V8 built it as
        # a rope, as passing it out of the engine would, so that work is timed too.
        key = (id(run), fn, json.dumps(arguments))
        if key not in stored:
            stored[key] = f"globalThis.__input{len(stored)}"
            literal = ", ".join(json.dumps(a, ensure_ascii=True) for a in arguments)
            run(f"{stored[key]} = [{literal}]; 0")
        entry = entries[fn]
        callee = callee or f"{REGISTRY}[{json.dumps(entry.module)}][{json.dumps(entry.export)}]"
        return JsCall(run, f"{callee}(...{stored[key]}).charCodeAt(0)")

    cases = [("parse", name, (text, ALLOWED)) for name, text in parse_inputs().items()]
    cases += [("repair", name, (raw,)) for name, raw in repair_inputs().items()]
    python = {"parse": parse_tool_calls_canonical, "repair": repair_arguments_canonical}
    timers = {"python": lambda fn, arguments: lambda: python[fn](*arguments)}
    timers.update({engine: lambda fn, arguments, run=run: js_timer(run, fn, arguments) for engine, run in engines.items()})
    if args.against:
        against(args, cases, timers, engines.keys(), js_timer)
        return
    typical = {fn: next(c for c in cases if c[0] == fn) for fn in ("parse", "repair")}
    rows = []
    for fn, name, arguments in cases:
        if args.only not in f"{fn} {name}":
            continue
        times, ratios = {}, {}
        for column, timer in timers.items():
            base = timer(fn, typical[fn][2])  # the typical input, stored under its own name
            typical_time, times[column] = paired_medians(base, timer(fn, arguments), args.repeat)
            ratios[column] = times[column] / typical_time
        reference_time, floor_time = paired_medians(timers["python"](fn, arguments), python_floor(fn, arguments), args.repeat)
        floor = (floor_time, reference_time / floor_time)
        peer = extractor_cell(engines, js_timer, fn, arguments, args.repeat)
        rows.append((fn, name, len(arguments[0].encode("utf-16-le")) // 2, times, ratios, floor, peer))
    print(f"CPU time, median of {args.repeat} runs, each input timed alternately with the typical input of "
          f"the same function; ratio = its time / the typical time; x floor = the Python reference's time / "
          f"its floor's, timed alternately"
          + ("; v8/extr = the twin's time / the extractor's, timed alternately on the same text; scan = the twin's "
             "balanced-object scan alone (SPEC.md 4), over the extractor's" if "v8" in engines else ""))
    print(f"{'fn':6} {'input':40} {'units':>6}" + "".join(f" {c + ' ms':>11} {'ratio':>5}" for c in timers)
          + f" {'py floor ms':>11} {'x floor':>7}"
          + (f" {'extractor ms':>12} {'v8/extr':>7} {'scan ms':>8} {'scan/extr':>8}" if "v8" in engines else ""))
    for fn, name, units, times, ratios, floor, peer in rows:
        cells = "".join(f" {times[c] * 1e3:11.2f} {ratios[c]:5.2f}" for c in timers)
        print(f"{fn:6} {name:40} {units:6d}{cells} {floor[0] * 1e3:11.3f} {floor[1]:7.2f}{peer}")


def extractor_cell(engines, js_timer, fn, arguments, repeat: int) -> str:
    """The regular-expression extractor's time on a parse input in V8 and the twin's over it,
    timed alternately on the same text (empty for repair inputs and without V8)."""
    run = engines.get("v8")
    if run is None or fn != "parse":
        return ""
    if not run("typeof globalThis.peerExtractToolCalls === 'function'"):
        run(EXTRACTOR.read_text(encoding="utf-8") + "; 0")
    twin, peer = paired_medians(js_timer(run, fn, arguments), js_timer(run, fn, arguments, "globalThis.peerExtractToolCalls"), repeat)
    # What no parser of the contract can skip: the balanced-object scan of the text (SPEC.md 4).
    scanner = f"((text) => String({REGISTRY}['src/agent/json-core.js'].scanObjects(text, 0, text.length).length))"
    scan, peer_again = paired_medians(js_timer(run, fn, arguments, scanner), js_timer(run, fn, arguments, "globalThis.peerExtractToolCalls"), repeat)
    return f" {peer * 1e3:12.3f} {twin / peer:7.1f} {scan * 1e3:8.3f} {scan / peer_again:8.1f}"


def against(args, cases, timers, engine_names, js_timer) -> None:
    """Each input timed in the other checkout (before) and here (after), alternately."""
    other = reference_in(args.against.resolve())
    python = {"parse": other.parse_tool_calls_canonical, "repair": other.repair_arguments_canonical}
    before = {"python": lambda fn, arguments: lambda: python[fn](*arguments)}
    other_engines = js_engines.available(load_project(args.against.resolve() / "pyproject.toml"), tuple(engine_names))
    before.update({engine: lambda fn, arguments, run=run: js_timer(run, fn, arguments) for engine, run in other_engines.items()})
    print(f"CPU time, median of {args.repeat} runs, each input timed alternately in {args.against} (before) and here "
          f"(after); change = after / before - 1")
    print(f"{'fn':6} {'input':40}" + "".join(f" {c + ' before':>15} {'after':>7} {'change':>6}" for c in timers))
    for fn, name, arguments in cases:
        if args.only not in f"{fn} {name}":
            continue
        cells = ""
        for column, timer in timers.items():
            old, new = paired_medians(before[column](fn, arguments), timer(fn, arguments), args.repeat)
            cells += f" {old * 1e3:15.2f} {new * 1e3:7.2f} {new / old - 1:+6.0%}"
        print(f"{fn:6} {name:40}{cells}")


if __name__ == "__main__":
    main()
