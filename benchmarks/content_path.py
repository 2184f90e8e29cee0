"""What the message path from a content script costs a full run, measured alternately.

The bundled extension declares no content script, so its gate runs no content engine. This
benchmark gives a copy of this checkout one narrow content script (in both trees, declared glue,
the known deviations of the background engines extended to their content twins, as a team whose
extension has content scripts would record them) and times `extparity run` there alternately:
every default engine but `firefox-content` against all of them, so the ratio is what Firefox's
content path (its relay through the harness's server) adds to the run:

    .venv/bin/python benchmarks/content_path.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from extparity.project.config import load_project

HERE = Path(__file__).resolve().parent.parent
EXTPARITY = Path(sys.executable).with_name("extparity")
MEASURED = "firefox-content"


def copy_with_content_script(folder: Path) -> None:
    """This checkout's committed files in ``folder``, with a content script on https://shop.example."""
    archive = subprocess.run(["git", "archive", "HEAD"], cwd=HERE, capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    for tree in ("chrome", "firefox"):
        (folder / "extension" / tree / "content.js").write_text("// a content script that sends nothing\n")
        manifest_path = folder / "extension" / tree / "manifest.json"
        manifest = json.loads(manifest_path.read_text())
        manifest["content_scripts"] = [{"matches": ["https://shop.example/*"], "js": ["content.js"]}]
        manifest_path.write_text(json.dumps(manifest, indent=2) + "\n")
    config = folder / "pyproject.toml"
    text = config.read_text()
    glue = "glue_scripts = [\n"
    assert glue in text, "pyproject.toml has no glue_scripts list to extend"
    config.write_text(text.replace(glue, glue + '  { script = "content.js", reason = "sends nothing" },\n', 1))
    deviations_path = folder / "fixtures" / "known-deviations.json"
    deviations = json.loads(deviations_path.read_text())
    for deviation in deviations:
        for engine in list(deviation["engines"]):
            if engine.endswith("-background"):
                twin = engine.replace("-background", "-content")
                deviation["engines"].append(twin)
                deviation["verdicts"][twin] = deviation["verdicts"][engine]
    deviations_path.write_text(json.dumps(deviations, indent=1) + "\n")


def engine_names(folder: Path) -> list[str]:
    """Every engine the copy's config has, content twins included, in its order."""
    return list(load_project(folder / "pyproject.toml").engines)


def run_seconds(folder: Path, engines: list[str]) -> float:
    """One `extparity run` of ``engines`` in ``folder``; exits the benchmark if its cases do not all agree."""
    started = time.perf_counter()
    done = subprocess.run([str(EXTPARITY), "run", "--engines", ",".join(engines), "--json", "out/run.json"],
                          cwd=folder, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"the run of {', '.join(engines)} failed (exit {done.returncode}): "
                 + " / ".join(done.stdout.strip().splitlines()[-2:]))
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="pairs of runs (without, with)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="extparity-content-") as temporary:
        folder = Path(temporary)
        copy_with_content_script(folder)
        every = engine_names(folder)
        if MEASURED not in every:
            sys.exit(f"the copy's engines have no {MEASURED}: {', '.join(every)}")
        without = [name for name in every if name != MEASURED]
        before, after = [], []
        for _ in range(args.repeat):
            before.append(run_seconds(folder, without))
            after.append(run_seconds(folder, every))
    ratios = [a / b for a, b in zip(after, before)]
    print(f"extparity run wall time, {args.repeat} alternating pairs, on a copy with one content script")
    print(f"without {MEASURED} ({len(without)} engines) s: " + " ".join(f"{t:.1f}" for t in before))
    print(f"with it ({len(every)} engines) s:        " + " ".join(f"{t:.1f}" for t in after))
    print(f"with / without per pair: {' '.join(f'{r:.2f}' for r in ratios)} (median {statistics.median(ratios):.2f})")


if __name__ == "__main__":
    main()
