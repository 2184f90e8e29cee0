"""How the HTML report scales: a 2,000-case and a 50,000-case result, side by side.

A real result of the bundled corpus (run here, or given with --result) is repeated with new
case ids up to each size, and one case in a hundred gets a divergence planted in one engine,
so the odd-one-out view and the diffs have work to do. For each size: the file size, the time
to write the page from the result (Python), and in Debian's Chromium the time until the page
has rendered (navigation start to the first list drawn: reading and parsing the embedded data
included), to switch to the odd-one-out view, to jump to the end of the list, and to open a case.

Usage: python benchmarks/html_report.py [--result RESULT.json] [--sizes 2000,50000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import copy
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from playwright.sync_api import sync_playwright

from extparity.reports import html_report

REPO = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
QUIET_ARGS = ["--no-sandbox", "--disable-background-networking", "--disable-component-update", "--disable-sync"]
ENGINES = "python,quickjs-chrome,quickjs-firefox,v8-chrome,spidermonkey-firefox"


def base_result(folder: Path) -> dict:
    path = folder / "base.json"
    subprocess.run([sys.executable, "-m", "extparity.cli", "run", "--engines", ENGINES, "--json", str(path)],
                   cwd=REPO, check=False, capture_output=True)
    return json.loads(path.read_text(encoding="utf-8"))


def scaled(base: dict, size: int) -> dict:
    """``base`` with its cases repeated to ``size``; every hundredth one diverges in one engine."""
    document = copy.deepcopy(base)
    engines = [row["engine"] for row in base["summary"]]
    odd = engines[-1]
    cases = []
    for index in range(size):
        case = copy.deepcopy(base["cases"][index % len(base["cases"])])
        case["id"] = f"{case['id']}.{index // len(base['cases'])}"
        if index % 100 == 7 and "verdict" in case:
            case["cells"][odd] = "diverges"
            case["divergent"] = {odd: case["verdict"].replace('"error":null', '"error":"planted"')}
            case["groups"] = [[e for e in engines if e != odd], [odd]]
            case["notes"] = {odd: ["differs from python"]}
        cases.append(case)
    document["cases"] = cases
    document["corpus"]["cases"] = size
    return document


def measure(page, path: Path) -> dict:
    page.goto(path.as_uri())
    page.wait_for_selector("body[data-rendered]", timeout=300_000)
    rendered = page.evaluate("() => performance.now()")
    odd = page.evaluate("""() => { const t = performance.now();
        document.querySelector('nav .views button[data-view=odd]').click(); return performance.now() - t; }""")
    page.evaluate("() => document.querySelector('nav .views button[data-view=matrix]').click()")
    for group in page.locator(".row.group").all():  # expand every group: the longest list there is
        if group.inner_text().startswith("▸"):
            group.click()
    end = page.evaluate("""() => new Promise((done) => { const list = document.getElementById('list');
        const t = performance.now(); list.scrollTop = list.scrollHeight;
        requestAnimationFrame(() => requestAnimationFrame(() => done(performance.now() - t))); })""")
    rows = page.evaluate("() => document.querySelectorAll('.row').length")
    open_case = page.evaluate("""() => { const t = performance.now();
        document.querySelector('.row[data-case]').click(); return performance.now() - t; }""")
    return {"rendered_ms": rendered, "odd_view_ms": odd, "scroll_end_ms": end, "open_case_ms": open_case, "rows_in_dom": rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--result", type=Path, help="a result of the bundled corpus (default: run one)")
    parser.add_argument("--sizes", default="2000,50000")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    sizes = [int(size) for size in args.sizes.split(",")]
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        base = json.loads(args.result.read_text(encoding="utf-8")) if args.result else base_result(folder)
        table = []
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=QUIET_ARGS)
            for size in sizes:
                document = scaled(base, size)
                started = time.perf_counter()
                page_text = html_report.render(document)
                write_s = time.perf_counter() - started
                path = folder / f"report-{size}.html"
                path.write_text(page_text, encoding="utf-8")
                runs = []
                for _ in range(args.repeat):
                    page = browser.new_page(viewport={"width": 1400, "height": 900})
                    runs.append(measure(page, path))
                    page.close()
                row = {key: statistics.median(run[key] for run in runs) for key in runs[0]}
                row.update(size=size, mb=path.stat().st_size / 1e6, write_s=write_s)
                table.append(row)
            browser.close()
    first = table[0]
    print(f"median of {args.repeat} page loads; ratio = value / the {first['size']:,}-case report's")
    print(f"{'cases':>7} {'MB':>6} {'ratio':>6} {'write s':>8} {'ratio':>6} {'render ms':>10} {'ratio':>6} "
          f"{'odd view ms':>11} {'scroll end ms':>13} {'open case ms':>12} {'rows in DOM':>11}")
    for row in table:
        print(f"{row['size']:>7,} {row['mb']:>6.1f} {row['mb'] / first['mb']:>6.1f} {row['write_s']:>8.2f} "
              f"{row['write_s'] / first['write_s']:>6.1f} {row['rendered_ms']:>10.0f} {row['rendered_ms'] / first['rendered_ms']:>6.1f} "
              f"{row['odd_view_ms']:>11.1f} {row['scroll_end_ms']:>13.1f} {row['open_case_ms']:>12.1f} {row['rows_in_dom']:>11.0f}")


if __name__ == "__main__":
    main()
