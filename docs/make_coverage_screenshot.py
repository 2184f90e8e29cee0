"""Make docs/coverage.png: the HTML report's coverage view of a real run of the bundled project.

Why a script: the picture in docs/reports.md should be the page extparity writes from Chromium's own
block coverage, not a mock-up. It runs the bundled corpus through the reference and Chromium
(page and service worker) with `--coverage`, renders the report from the saved result and the
coverage file with `extparity report` (the path a CI artifact takes), opens it in Debian's
Chromium, switches to the Coverage view, scrolls to the first line no case ran and saves the
page as a PNG.

Usage: python docs/make_coverage_screenshot.py [--out PNG] [--keep DIR]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

REPO = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
QUIET_ARGS = ["--no-sandbox", "--disable-background-networking", "--disable-component-update", "--disable-sync"]
ENGINES = "python,chromium,chromium-background"


def make_report(root: Path) -> Path:
    result, coverage, html = root / "result.json", root / "coverage.json", root / "report.html"
    extparity = [sys.executable, "-m", "extparity.cli", "--config", str(REPO / "pyproject.toml")]
    done = subprocess.run([*extparity, "run", "--engines", ENGINES, "--json", str(result), "--coverage", str(coverage)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"the run failed (exit {done.returncode}):\n{done.stderr}")
    done = subprocess.run([*extparity, "report", str(result), "--coverage", str(coverage), "--html", str(html)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"extparity report failed (exit {done.returncode}):\n{done.stderr}")
    return html


def screenshot(html: Path, out: Path) -> Path:
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=QUIET_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1500, "height": 860}, device_scale_factor=1)
            page.goto(html.as_uri())
            page.wait_for_selector("body[data-rendered]", timeout=20_000)
            page.click("nav .views button[data-view=coverage]")
            first = page.locator("#coverage-pane tr.miss").first
            first.wait_for(timeout=10_000)
            page.evaluate("(row) => row.closest('#coverage-pane').scrollTop = row.offsetTop - 160",
                          first.element_handle())
            out.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(out))
        finally:
            browser.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "coverage.png")
    parser.add_argument("--keep", type=Path, help="keep the result, the coverage file and the report in this folder")
    args = parser.parse_args()
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)
        print(screenshot(make_report(args.keep), args.out))
        return
    with tempfile.TemporaryDirectory() as folder:
        print(screenshot(make_report(Path(folder)), args.out))


if __name__ == "__main__":
    main()
