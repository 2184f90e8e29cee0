"""A full parity run next to the browsers' own start-up, and the harness at 2k/10k/50k cases.

Everything is measured side by side in one invocation and reported as ratios, because absolute
times on a shared 2-core machine move from run to run:

* floor: Chromium with the extension (until its service worker runs) and Firefox ESR (until
  Playwright's launch returns), started concurrently; nothing can finish before both are up;
* full run: the bundled corpus as `extparity run` does it (engines concurrently), reported as a
  multiple of the floor (target <= 1.5), for the five engines issue 11 measured (python, both
  QuickJS, Chromium, Firefox) and for every configured engine (adding V8, SpiderMonkey and the
  two message-path engines, whose cases each travel as one runtime.sendMessage);
* cases/s of each module-path engine at 2k, 10k and 50k cases (the bundled corpus repeated),
  without its start-up (the message-path engines' speed is in the full run's per-engine times), and the harness's own work at each size (corpus loading, judging, the JSON result)
  as a share of the engines' time;
* peak RSS of the harness process and of its largest child.

    .venv/bin/python benchmarks/full_run.py [--repeat 3] [--sizes 2000,10000,50000]   (--sizes "": the ratios only)
    .venv/bin/python benchmarks/cpu_by_process.py -- .venv/bin/python benchmarks/full_run.py --floor-once

Every configured engine is what `make parity` runs (`extparity run` with no --engines): with the
gate's message adapters configured, that includes the two message-path engines, which share
their tree's browser with the page engines (one Chromium and one Firefox in all).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import statistics
import tempfile
import threading
import time
from pathlib import Path

from playwright.async_api import async_playwright

from extparity.corpus.cases import load_corpus
from extparity.corpus.deviations import load_deviations
from extparity.engines.driver import run_engine
from extparity.engines.kinds.chromium import LAUNCH_ARGS
from extparity.project.config import load_project
from extparity.project.kinds import build_engine
from extparity.reports import summary
from extparity.results import build
from extparity.run.judge import judge
from extparity.run.parity import RunResult, disk_hashes, run_parity

PROJECT = load_project()


async def _chromium_floor() -> float:
    tree = str(PROJECT.trees[PROJECT.engines["chromium"].tree])
    started = time.perf_counter()
    async with async_playwright() as p:
        with tempfile.TemporaryDirectory(prefix="floor-chromium-") as profile:
            context = await p.chromium.launch_persistent_context(
                profile, executable_path=PROJECT.engines["chromium"].options.get("executable", "/usr/bin/chromium"),
                headless=True, args=[f"--disable-extensions-except={tree}", f"--load-extension={tree}", *LAUNCH_ARGS])
            if not context.service_workers:
                await context.wait_for_event("serviceworker")
            up = time.perf_counter() - started
            await context.close()
    return up


async def _firefox_floor() -> float:
    started = time.perf_counter()
    async with async_playwright() as p:
        with tempfile.TemporaryDirectory(prefix="floor-firefox-") as profile:
            context = await p.firefox.launch_persistent_context(
                profile, channel="moz-firefox", headless=True,
                executable_path=PROJECT.engines["firefox"].options.get("executable", "/usr/bin/firefox-esr"))
            up = time.perf_counter() - started
            await context.close()
    return up


def floor_seconds() -> float:
    """Wall time until both browsers are up, started at the same moment in two threads."""
    times: dict[str, float] = {}
    threads = [threading.Thread(target=lambda k=k, f=f: times.__setitem__(k, asyncio.run(f())))
               for k, f in (("chromium", _chromium_floor), ("firefox", _firefox_floor))]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return max(times.values()) if len(times) == 2 else time.perf_counter() - started


ISSUE_ENGINES = ["python", "quickjs-chrome", "quickjs-firefox", "chromium", "firefox"]


def full_run(cases, engines: list[str]) -> tuple[float, dict[str, float]]:
    """Wall time of one run, and each engine's own wall time inside it."""
    started = time.perf_counter()
    result = run_parity(PROJECT, cases, engines, budget_s=1800)
    elapsed = time.perf_counter() - started
    assert not result.failed, summary.failure_lines(result)[:5]
    return elapsed, {name: run.timings["wall_s"] for name, run in result.runs.items()}


def repeated(cases, size: int):
    """`size` cases: the corpus repeated, each copy with its own ids."""
    out = []
    copy = 0
    while len(out) < size:
        for case in cases:
            if len(out) == size:
                break
            out.append(case if copy == 0 else type(case)(**{**case.__dict__, "id": f"{case.id}.r{copy}"}))
        copy += 1
    return out


def scaling(cases, sizes: list[int]) -> list[dict]:
    rows = []
    for size in sizes:
        batch = repeated(cases, size)
        wire = [case.wire(PROJECT.entries[case.fn]) for case in batch]
        runs, speeds = {}, {}
        for name, spec in PROJECT.engines.items():
            if spec.via == "message":
                continue
            run = run_engine(build_engine(spec, PROJECT), wire, budget_s=3600)
            assert run.status == "ok" and not run.failures, (name, run.detail)
            runs[name] = run
            speeds[name] = size / sum(run.timings["chunks_s"])
        with tempfile.TemporaryDirectory() as folder:  # the harness's own work, as `run` does it
            path = Path(folder) / "cases.jsonl"
            path.write_text("".join(json.dumps(case.line_json()) + "\n" for case in batch))
            (Path(folder) / "tags.json").write_text(json.dumps({tag: "t" for case in batch for tag in case.tags}))
            started = time.perf_counter()
            loaded = load_corpus([path], PROJECT.entries)
            deviations, _ = load_deviations(PROJECT.known_deviations, PROJECT.engines, None)
            results = judge(loaded.cases, runs, PROJECT.reference, PROJECT.entries, deviations)
            hashes, _ = disk_hashes(PROJECT)
            result = RunResult(engines=list(runs), reference=PROJECT.reference, runs=runs, results=results,
                               module_problems=[], disk_hashes=hashes, background_hashes={}, background_problems=[],
                               background_on_demand={}, adapters={}, deviation_problems=[])
            text = build.dumps(build.json_result(result, PROJECT, [str(path)], []))
            summary.failure_lines(result)
            harness = time.perf_counter() - started
        engines_total = sum(sum(run.timings["chunks_s"]) for run in runs.values())
        rows.append({"size": size, "speeds": speeds, "harness_s": harness, "engines_s": engines_total,
                     "json_mb": len(text) / 1e6})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--sizes", default="2000,10000,50000", help='case counts for cases/s; "" for none')
    parser.add_argument("--floor-once", action="store_true",
                        help="only start the two browsers as the floor does, once (for cpu_by_process.py)")
    args = parser.parse_args()
    if args.floor_once:
        print(f"floor {floor_seconds():.2f} s")
        return
    cases = load_corpus(PROJECT.corpus, PROJECT.entries, base=PROJECT.root).cases
    every = list(PROJECT.engines)
    floors, fives, alls = [], [], []
    for _ in range(args.repeat):  # interleaved, so all three see the same machine
        floors.append(floor_seconds())
        fives.append(full_run(cases, ISSUE_ENGINES))
        alls.append(full_run(cases, every))
    floor = statistics.median(floors)
    print(f"full run vs browser start-up floor, median of {args.repeat} interleaved runs, {len(cases)} cases")
    print(f"  floor (Chromium + extension and Firefox ESR, concurrent) {floor:6.2f} s")
    for label, runs in ((f"the issue's {len(ISSUE_ENGINES)} engines", fives), (f"all {len(every)} engines (make parity)", alls)):
        full = statistics.median(wall for wall, _ in runs)
        print(f"  full run, {label + ',':32} {full:6.2f} s   ratio {full / floor:.2f}")
        median_engine = {name: statistics.median(walls[name] for _, walls in runs) for name in runs[0][1]}
        print("    each engine's wall time in it: " + ", ".join(f"{n} {t:.1f}" for n, t in median_engine.items()))
    if not args.sizes:
        return
    rows = scaling(cases, [int(s) for s in args.sizes.split(",")])
    names = list(rows[0]["speeds"])
    print("\ncases/s per engine, without start-up (one engine at a time)")
    print(f"{'cases':>7} " + " ".join(f"{n:>16}" for n in names))
    for row in rows:
        print(f"{row['size']:7d} " + " ".join(f"{row['speeds'][n]:16.0f}" for n in names))
    print("\nthe harness's own work (load the corpus, judge, JSON result, failure lines) vs the engines' time")
    for row in rows:
        print(f"{row['size']:7d} cases: harness {row['harness_s']:6.2f} s = {row['harness_s'] / row['engines_s']:.1%} "
              f"of {row['engines_s']:.1f} s in engines; JSON result {row['json_mb']:.1f} MB")
    self_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    child_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(f"\npeak RSS: harness process {self_mb:.0f} MB, largest child process {child_mb:.0f} MB")


if __name__ == "__main__":
    main()
