"""Fuzz throughput: cases/s of `extparity fuzz` for several engine sets, one after another in
one invocation, on the same seed and cases, so the rows compare as ratios.

Each row is a whole campaign as a user runs it (engines started once, the cases generated,
judged and, with no finding, nothing shrunk), including start-up. Beside the wall-clock rate,
each row gives the CPU time the campaign used (the harness and every worker process it
started), and the rate that CPU time allows on this machine's cores if no core ever waited:
when the measured rate is near that bound, the engines' own work bounds the campaign, not the
harness. Each headless engine alone shows which engine costs most.

With ``--before DIR`` (a checkout of an older harness, e.g. ``git worktree add /tmp/old
3574734``), every row also runs that checkout's harness on this checkout's subject, config and
cases, interleaved with this one's so that both see the same machine.

    .venv/bin/python benchmarks/fuzz_throughput.py [--cases 20000] [--seed 20261201] [--before DIR] [--only headless|five] [--repeat N]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HEADLESS = "python,quickjs-chrome,quickjs-firefox,v8-chrome,spidermonkey-firefox"
SETS = {
    "five headless engines": HEADLESS,
    **{f"{name} alone": name for name in HEADLESS.split(",")},
    "python + Chromium + Firefox": "python,chromium,firefox",
    "all seven engines": f"{HEADLESS},chromium,firefox",
}


NEWER_KEYS = ("fuzz = {",)  # lines of [tool.extparity.gate] that a harness before 2026-12 refuses
OLDER_CONFIG = ROOT / ".fuzz-throughput-before.toml"  # beside pyproject.toml: the same root for its paths


def older_config() -> Path:
    """This project's config without the keys an older harness does not know (they do not
    change what a campaign runs)."""
    lines = (ROOT / "pyproject.toml").read_text(encoding="utf-8").splitlines(keepends=True)
    OLDER_CONFIG.write_text("".join(line for line in lines if not line.startswith(NEWER_KEYS)), encoding="utf-8")
    return OLDER_CONFIG


def campaign(engines: str, cases: int, seed: int, folder: Path, harness: Path) -> dict:
    """One campaign by the harness in ``harness`` (its py_src first on the path), with its CPU seconds."""
    summary = folder / "summary.json"
    config = ["--config", str(older_config())] if harness != ROOT else []
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(harness / "py_src"), os.environ.get("PYTHONPATH")]))}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run([sys.executable, "-m", "extparity.cli", *config, "fuzz", "--seed", str(seed), "--cases", str(cases),
                           "--engines", engines, "--out", str(folder / "found"), "--json", str(summary)],
                          cwd=ROOT, env=env, capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    OLDER_CONFIG.unlink(missing_ok=True)
    if done.returncode != 0:
        raise SystemExit(f"{engines}: exit {done.returncode}\n{done.stderr}")
    result = json.loads(summary.read_text(encoding="utf-8"))
    result["cpu_s"] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cases", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=20261201)
    parser.add_argument("--before", type=Path, metavar="DIR", help="a checkout of an older harness to time side by side")
    parser.add_argument("--only", choices=["headless", "five"],
                        help="headless: leave out the rows with browsers; five: only the five headless engines together")
    parser.add_argument("--repeat", type=int, default=1, help="run each row this many times, alternating harnesses")
    args = parser.parse_args()
    cores = os.cpu_count() or 1
    harnesses = {"this": ROOT, **({"before": args.before.resolve()} if args.before else {})}
    sets = {label: engines for label, engines in SETS.items()
            if not (args.only == "headless" and {"chromium", "firefox"} & set(engines.split(",")))
            and not (args.only == "five" and engines != HEADLESS)}
    rows = []
    for label, engines in sets.items():
        for which, harness in [item for _ in range(args.repeat) for item in harnesses.items()]:
            with tempfile.TemporaryDirectory(prefix="fuzz-throughput-") as folder:
                rows.append((label, which, campaign(engines, args.cases, args.seed, Path(folder), harness)))
    print(f"extparity fuzz --seed {args.seed} --cases {args.cases}, per engine set and harness; "
          f"CPU bound = cases / (CPU s / {cores} cores)")
    print(f"{'engines':32} {'harness':8} {'cases/s':>8} {'CPU s':>7} {'CPU bound':>9}  busiest engine (busy s)")
    for label, which, summary in rows:
        busiest = max(summary["engines"].items(), key=lambda item: item[1]["busy_s"])
        bound = summary["cases"] / (summary["cpu_s"] / cores)
        print(f"{label:32} {which:8} {summary['cases_per_s']:8.0f} {summary['cpu_s']:7.1f} {bound:9.0f}  "
              f"{busiest[0]} ({busiest[1]['busy_s']:.1f})")


if __name__ == "__main__":
    main()
