"""Worst-case inputs next to a typical one, measured side by side in one run.

The parser promises linear time with no restart cap, so adversarial 10,000-unit inputs must
cost about what a typical 10,000-unit response costs. This prints, per engine, the median time
of each input and its ratio to the typical input. Engines: the Python reference in process and
the Chrome tree's JS modules in QuickJS (the same linker the harness uses).

    .venv/bin/python benchmarks/worst_case.py [--repeat 15]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

import quickjs

from toolcalls import parse_tool_calls_canonical, repair_arguments_canonical
from extparity.config import load_project
from extparity.engines.linker import PRELUDE, REGISTRY, module_graph

CALL = '{"name":"click","arguments":{"selector":"#save","options":{"scroll":true}}}'
ALLOWED = ["click", "navigate", "read_page"]


def fit(text: str, units: int = 10_000) -> str:
    """Pad or cut to exactly `units` UTF-16 units (the inputs here are ASCII)."""
    return (text + " " * units)[:units]


def typical() -> str:
    paragraph = ("The page lists three buttons; the user asked to save the draft, so I will press "
                 "the one labelled Save and then read the page again to confirm.\n")
    body = paragraph * 60
    return fit(body[: 10_000 - 3 * (len(CALL) + 1)] + ("\n" + CALL) * 3)


def parse_inputs() -> dict[str, str]:
    tail = "\n" + CALL
    return {
        "typical prose + 3 calls": typical(),
        "10,000 '{'": "{" * 10_000,
        "9,9xx stray '{' then a call": "{" * (10_000 - len(tail)) + tail,
        "'{\"' pairs (strings inside braces)": fit('{"' * 5_000),
        "'{\"a\":\"\\n' lines (strings broken by LF)": fit('{"a":"\n' * 1_500),
        "5,000 '{}' on one line": "{}" * 5_000,
        "900 '<tool_call>' openers": fit("<tool_call>" * 909),
        "'call:x{}' repeated": fit("call:x{}" * 1_250),
        "1,000 '<function=' openers": fit("<function=a>" * 833),
        "'```\\n' fence lines": fit("```\n" * 2_500),
        "<think> then 10k of braces": fit("<think>" + "{" * 9_990),
    }


def repair_inputs() -> dict[str, str]:
    return {
        "typical 10,000-unit arguments": fit('{"text":"' + "lorem ipsum " * 830) + '"}',
        "'[' x 100,000": "[" * 100_000,
        "5,000-digit number": '{"n": ' + "9" * 5_000,
        "10,000 closers at the tail": '{"a":1}' + "}" * 10_000,
    }


def median_seconds(call, repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        call()
        samples.append(time.perf_counter() - started)
    return statistics.median(samples)


def quickjs_context(config) -> quickjs.Context:
    tree = config.trees["chrome"]
    ctx = quickjs.Context()
    ctx.set_time_limit(60)
    ctx.eval(PRELUDE)
    for module in module_graph(tree, [entry.module for entry in config.entries.values()]):
        ctx.module(module.module)
        while ctx.execute_pending_job():
            pass
    return ctx


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    config = load_project()
    ctx = quickjs_context(config)
    parse_js = config.entries["parse"]
    repair_js = config.entries["repair"]

    def js_call(entry, *arguments):
        literal = ", ".join(json.dumps(a, ensure_ascii=True) for a in arguments)
        source = f'{REGISTRY}[{json.dumps(entry.module)}][{json.dumps(entry.export)}]({literal}).length'
        return lambda: ctx.eval(source)

    rows = []
    for name, text in parse_inputs().items():
        rows.append(("parse", name, len(text.encode("utf-16-le")) // 2,
                     median_seconds(lambda: parse_tool_calls_canonical(text, ALLOWED), args.repeat),
                     median_seconds(js_call(parse_js, text, ALLOWED), args.repeat)))
    for name, raw in repair_inputs().items():
        rows.append(("repair", name, len(raw),
                     median_seconds(lambda: repair_arguments_canonical(raw), args.repeat),
                     median_seconds(js_call(repair_js, raw), args.repeat)))
    base = {fn: next(r for r in rows if r[0] == fn) for fn in ("parse", "repair")}
    print(f"median of {args.repeat} runs; ratio = time / the typical input of the same function")
    print(f"{'fn':6} {'input':42} {'units':>7} {'python ms':>10} {'ratio':>6} {'quickjs ms':>11} {'ratio':>6}")
    for fn, name, units, py, js in rows:
        print(f"{fn:6} {name:42} {units:7d} {py * 1e3:10.2f} {py / base[fn][3]:6.2f} {js * 1e3:11.2f} {js / base[fn][4]:6.2f}")


if __name__ == "__main__":
    main()
