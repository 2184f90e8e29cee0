"""Fuzz throughput: cases/s of `extparity fuzz` for several engine sets, one after another in
one invocation, on the same seed and cases, so the rows compare as ratios.

Each row is a whole campaign as a user runs it (engines started once, the cases generated,
judged and, with no finding, nothing shrunk), including start-up.

    .venv/bin/python benchmarks/fuzz_throughput.py [--cases 20000] [--seed 20261201]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SETS = {
    "python": "python",
    "python + both QuickJS (fast path)": "python,quickjs-chrome,quickjs-firefox",
    "five headless engines": "python,quickjs-chrome,quickjs-firefox,v8-chrome,spidermonkey-firefox",
    "python + Chromium + Firefox": "python,chromium,firefox",
    "all seven engines": "python,quickjs-chrome,quickjs-firefox,v8-chrome,spidermonkey-firefox,chromium,firefox",
}


def campaign(engines: str, cases: int, seed: int, folder: Path) -> dict:
    summary = folder / "summary.json"
    done = subprocess.run([sys.executable, "-m", "extparity.cli", "fuzz", "--seed", str(seed), "--cases", str(cases),
                           "--engines", engines, "--out", str(folder / "found"), "--json", str(summary)],
                          cwd=ROOT, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{engines}: exit {done.returncode}\n{done.stderr}")
    return json.loads(summary.read_text(encoding="utf-8"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cases", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=20261201)
    args = parser.parse_args()
    rows = []
    for label, engines in SETS.items():
        with tempfile.TemporaryDirectory(prefix="fuzz-throughput-") as folder:
            rows.append((label, campaign(engines, args.cases, args.seed, Path(folder))))
    base = rows[0][1]["cases_per_s"]
    print(f"extparity fuzz --seed {args.seed} --cases {args.cases}, per engine set; ratio = cases/s / python alone")
    print(f"{'engines':40} {'cases/s':>8} {'ratio':>6}  busiest engine (busy s)")
    for label, summary in rows:
        busiest = max(summary["engines"].items(), key=lambda item: item[1]["busy_s"])
        print(f"{label:40} {summary['cases_per_s']:8.0f} {summary['cases_per_s'] / base:6.2f}  "
              f"{busiest[0]} ({busiest[1]['busy_s']:.1f})")


if __name__ == "__main__":
    main()
