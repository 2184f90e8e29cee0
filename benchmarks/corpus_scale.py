"""Memory, merge time and the HTML report's first screen as the corpus grows (issue 39, items 3 and 4).

The bundled corpus (fixtures/) is replicated N times into a temporary folder (every case's id
gets a ``.rK`` suffix, so the copies are new cases; nothing is written into the checkout), then,
for two source trees side by side (a baseline checkout's py_src and this one's), alternately:

* `extparity run --corpus COPY --json` over the module-path engines: the peak RSS of every
  process (the kernel's VmHWM from /proc, read every 0.2 s until each process ends), reported
  for the harness and for the largest child of each kind;
* `extparity merge` of the result split into 8 shards (by ``in_shard``, as `run --shard K/8`
  splits it): wall time and peak RSS;
* `extparity report --html` of the result, and the time until Chromium (Playwright) shows the
  first row of the case list (a group's or a case's ``.row``) after navigating to the file.

    .venv/bin/python benchmarks/corpus_scale.py --base /tmp/perf-base --times 40
    .venv/bin/python benchmarks/corpus_scale.py --base /tmp/perf-base --times 160 --trees this --engines python,quickjs-chrome

(benchmarks/README.md has the exact commands of its figures.)

Figures are per tree and as the ratio this tree / base; absolute times on the shared 2-core
machine move from run to run, the ratios and the memory much less.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
MODULE_PATH_ENGINES = "python,quickjs-chrome,quickjs-firefox,v8-chrome,spidermonkey-firefox,chromium,firefox"
GIB = 1024 ** 3
CLI = [sys.executable, "-c", "import sys; from extparity.cli import main; sys.exit(main())"]


def replicate(target: Path, times: int) -> int:
    """fixtures/ copied ``times`` times with new ids, keeping its folder layout and tags.json."""
    fixtures = HERE / "fixtures"
    total = 0
    target.mkdir(parents=True)
    (target / "tags.json").write_bytes((fixtures / "tags.json").read_bytes())
    for source in sorted(fixtures.rglob("*.jsonl")):
        relative = source.relative_to(fixtures)
        lines = [json.loads(line) for line in source.read_text(encoding="utf-8").splitlines() if line.strip()]
        for k in range(times):
            out = target / relative.parent / f"{relative.stem}-{k:03d}.jsonl"
            out.parent.mkdir(parents=True, exist_ok=True)
            with out.open("w", encoding="utf-8") as handle:
                for case in lines:
                    handle.write(json.dumps({**case, "id": f"{case['id']}.r{k}"}) + "\n")
            total += len(lines)
    return total


def _children() -> dict[int, list[int]]:
    by_parent: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            parent = int(stat[stat.rindex(")") + 2:].split()[1])
            by_parent.setdefault(parent, []).append(int(entry))
    return by_parent


def _hwm(pid: int) -> tuple[int, str] | None:
    """(peak RSS in bytes, a short label) of a live process."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
        command = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return None
    kib = next((int(line.split()[1]) for line in status.splitlines() if line.startswith("VmHWM:")), 0)
    # Chromium rewrites its command line into one space-separated string.
    words = b" ".join(command).decode(errors="replace").split()
    name = Path(words[0]).name if words else "?"
    kind = next((word[7:] for word in words if word.startswith("--type=")), "")
    name = "chromium" if name.startswith("extparity-chromium") or name == "chrome" else name
    return kib * 1024, f"{name} {kind}".strip()


def measured(command: list[str], env: dict, cwd: Path) -> tuple[float, int, dict[str, int], int]:
    """Run ``command``; (wall s, exit code, peak RSS by process label (largest per label), harness peak)."""
    started = time.perf_counter()
    process = subprocess.Popen(command, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    peaks: dict[int, tuple[int, str]] = {}
    stop = threading.Event()

    def poll() -> None:
        while not stop.is_set():
            tree, pending = _children(), [process.pid]
            while pending:
                pid = pending.pop()
                found = _hwm(pid)
                if found is not None and found[0] >= peaks.get(pid, (0, ""))[0]:
                    peaks[pid] = found
                pending += tree.get(pid, [])
            stop.wait(0.2)

    watcher = threading.Thread(target=poll, daemon=True)
    watcher.start()
    _, stderr = process.communicate()
    stop.set()
    watcher.join()
    wall = time.perf_counter() - started
    if process.returncode not in (0, 1):
        sys.stderr.write(stderr.decode(errors="replace")[-2000:])
    elif process.returncode == 1:  # a run that fails its cases still measured what it should; say why it failed
        sys.stderr.write("".join(stderr.decode(errors="replace").splitlines(keepends=True)[-3:]))
    by_label: dict[str, int] = {}
    for pid, (peak, label) in peaks.items():
        if pid != process.pid:
            by_label[label] = max(by_label.get(label, 0), peak)
    return wall, process.returncode, by_label, peaks.get(process.pid, (0, ""))[0]


def split_shards(result: Path, folder: Path, count: int, source: Path) -> list[Path]:
    """The result as the ``count`` shard results `run --shard K/count` would write (cases by
    ``in_shard``; the summary is recomputed by merge, so it is left as the whole run's)."""
    sys.path.insert(0, str(source))
    from extparity.results.build import dumps
    from extparity.results.shards import in_shard

    document = json.loads(result.read_text(encoding="utf-8"))
    paths = []
    for k in range(1, count + 1):
        part = {**document, "cases": [case for case in document["cases"] if in_shard(case["id"], (k, count))]}
        part["corpus"] = {**document["corpus"], "cases": len(part["cases"])}
        paths.append(folder / f"shard-{k}.json")
        paths[-1].write_text(dumps(part), encoding="utf-8")
    return paths


def first_rows_s(page_file: Path) -> tuple[float, float]:
    """(seconds until the first ``.row`` is shown, seconds until the load event) in Chromium."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path="/usr/bin/chromium")
        page = browser.new_page()
        started = time.perf_counter()
        page.goto(page_file.as_uri(), wait_until="commit", timeout=120_000)
        page.wait_for_selector("#list-space .row", state="attached", timeout=120_000)
        rows = time.perf_counter() - started
        page.wait_for_load_state("load", timeout=120_000)
        loaded = time.perf_counter() - started
        browser.close()
    return rows, loaded


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", type=Path, required=True, help="checkout of the baseline (its py_src is used)")
    parser.add_argument("--times", type=int, default=40, help="copies of the bundled corpus")
    parser.add_argument("--engines", default=MODULE_PATH_ENGINES)
    parser.add_argument("--shards", type=int, default=8)
    parser.add_argument("--skip", default="", help="comma-separated parts to leave out: run, merge, html")
    parser.add_argument("--trees", default="base,this", help="which trees run the corpus")
    parser.add_argument("--folder", type=Path, help="keep the corpus and results here (default: a temporary folder); "
                        "with --skip run, merge and html use the result a run left in it")
    args = parser.parse_args()
    skip = set(filter(None, args.skip.split(",")))
    trees = {"base": args.base.resolve(), "this": HERE}
    with tempfile.TemporaryDirectory(prefix="extparity-scale-") as temporary:
        folder = args.folder or Path(temporary)
        if (folder / "corpus").exists():
            total = sum(1 for path in (folder / "corpus").rglob("*.jsonl") for _ in path.open())
        else:
            total = replicate(folder / "corpus", args.times)
        print(f"corpus: {total} cases ({args.times} x the bundled corpus), engines {args.engines}")
        for name, root in trees.items():
            if name not in args.trees.split(","):
                continue
            env = {**os.environ, "PYTHONPATH": str(root / "py_src")}
            result = folder / f"{name}.json"
            if "run" not in skip:
                wall, code, children, harness = measured(
                    [*CLI, "run", "--config", str(root / "pyproject.toml"), "--corpus", str(folder / "corpus"),
                     "--engines", args.engines, "--json", str(result)], env, root)
                largest = sorted(children.items(), key=lambda item: -item[1])[:6]
                print(f"run   {name:4}: exit {code}, {wall:7.1f} s, harness peak {harness / GIB:.2f} GiB; largest children: "
                      + ", ".join(f"{label} {peak / GIB:.2f}" for label, peak in largest))
        source = folder / "this.json" if (folder / "this.json").exists() else folder / "base.json"
        if "merge" not in skip:
            shards = split_shards(source, folder, args.shards, HERE / "py_src")
            for repeat in range(2):
                for name, root in trees.items():
                    env = {**os.environ, "PYTHONPATH": str(root / "py_src")}
                    wall, code, _, harness = measured([*CLI, "merge", *map(str, shards),
                                                       "--json", str(folder / f"merged-{name}.json")], env, root)
                    print(f"merge {name:4}: exit {code}, {wall:6.2f} s, peak {harness / GIB:.2f} GiB ({args.shards} shards)")
            same = (folder / "merged-base.json").read_bytes() == (folder / "merged-this.json").read_bytes()
            print(f"merge: the two trees' merged results are {'byte-identical' if same else 'DIFFERENT'}")
        if "html" not in skip:
            for name, root in trees.items():
                env = {**os.environ, "PYTHONPATH": str(root / "py_src")}
                page = folder / f"{name}.html"
                wall, code, _, harness = measured([*CLI, "report", str(source),
                                                   "--html", str(page)], env, root)
                rows, loaded = first_rows_s(page)
                print(f"html  {name:4}: report {wall:6.2f} s, peak {harness / GIB:.2f} GiB, {page.stat().st_size / 1e6:.0f} MB; "
                      f"first rows after {rows:.2f} s, load event after {loaded:.2f} s")


if __name__ == "__main__":
    main()
