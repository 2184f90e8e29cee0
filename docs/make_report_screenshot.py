"""Make docs/report.png: the HTML report of a real run with one divergence planted on purpose.

Why a script: the picture in docs/reports.md should be the report extparity writes, of engines
really running, not a mock-up. It copies both extension trees to a temporary folder, removes
one parsing rule from the Firefox twin only (the comma allowance after a bare call), runs the
bundled corpus through the reference and three headless JS engines (only one of them loads the
Firefox tree, so it is the odd one out), opens the HTML report
in Debian's Chromium, switches to the odd-one-out view, picks the first case and saves the
page as a PNG.

Usage: python docs/make_report_screenshot.py [--out PNG] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

from playwright.sync_api import sync_playwright

REPO = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
QUIET_ARGS = ["--no-sandbox", "--disable-background-networking", "--disable-component-update", "--disable-sync"]
ENGINES = "python,quickjs-chrome,v8-chrome,quickjs-firefox"
PARSER = "src/agent/tool-call-parser.js"
COMMA_RULE = "  if (i < u.length && u.charCodeAt(i) === COMMA) i = skipInlineWs(u, i + 1);\n"


def toml_value(value) -> str:
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {toml_value(v)}" for k, v in value.items()) + " }"
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    return json.dumps(value)


def planted_project(root: Path) -> Path:
    """The bundled project with copied trees, the comma rule gone from the Firefox twin."""
    for tree in ("chrome", "firefox"):
        shutil.copytree(REPO / "extension" / tree, root / tree)
    shutil.copytree(REPO / "fixtures", root / "fixtures")
    parser = root / "firefox" / PARSER
    text = parser.read_text(encoding="utf-8")
    if text.count(COMMA_RULE) != 1:
        raise SystemExit(f"the comma rule this script removes is no longer in {PARSER}")
    parser.write_text(text.replace(COMMA_RULE, ""), encoding="utf-8")
    table = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["extparity"]
    table.update(trees={"chrome": "chrome", "firefox": "firefox"})
    table["engines"]["python"]["path"] = str(REPO / "py_src")
    lines = ["[tool.extparity]"] + [f"{k} = {toml_value(v)}" for k, v in table.items() if not isinstance(v, dict)]
    for name, sub in table.items():
        if isinstance(sub, dict):
            lines += [f"[tool.extparity.{name}]"] + [f"{k} = {toml_value(v)}" for k, v in sub.items()]
    config = root / "pyproject.toml"
    config.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return config


def make_report(root: Path) -> Path:
    config = planted_project(root)
    html = root / "report.html"
    done = subprocess.run([sys.executable, "-m", "extparity.cli", "--config", str(config), "run", "--engines", ENGINES,
                           "--html", str(html)], capture_output=True, text=True)
    if done.returncode != 1 or not html.is_file():
        raise SystemExit(f"expected a failing run with a report, got exit {done.returncode}:\n{done.stderr}")
    return html


def screenshot(html: Path, out: Path) -> Path:
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=QUIET_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1500, "height": 860}, device_scale_factor=1)
            page.goto(html.as_uri())
            page.wait_for_selector("body[data-rendered]", timeout=20_000)
            page.click("nav .views button[data-view=odd]")
            page.click(".row[data-case]")
            page.wait_for_selector("#case-pane table.diff")
            out.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(out))
        finally:
            browser.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "report.png")
    parser.add_argument("--keep", type=Path, help="keep the planted project and its report in this folder")
    args = parser.parse_args()
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)
        print(screenshot(make_report(args.keep), args.out))
        return
    with tempfile.TemporaryDirectory() as folder:
        print(screenshot(make_report(Path(folder)), args.out))


if __name__ == "__main__":
    main()
