"""Render the Tool Call Inspector page in Debian's Chromium and save it as docs/inspector.png.

Why a script: the screenshot in the docs should show the real extension running the real
agent modules, so it is regenerated from the unpacked tree rather than drawn by hand.
The page parses its prefilled example on load, so no clicking is needed.

Usage: python docs/make_screenshot.py [EXTENSION_TREE] [--out PNG]
(defaults: extension/chrome and docs/inspector.png in this repository).
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path
from urllib.parse import urlparse

from playwright.sync_api import TimeoutError as PlaywrightTimeoutError
from playwright.sync_api import sync_playwright

REPO = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
# As root Chromium needs --no-sandbox; the rest stop it calling out to a closed network.
QUIET_ARGS = [
    "--no-sandbox",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def make_screenshot(tree: Path, out: Path) -> Path:
    """Load `tree` as an unpacked extension, open its inspector page, write a PNG to `out`."""
    tree = tree.resolve()
    with sync_playwright() as p, tempfile.TemporaryDirectory() as profile:
        context = p.chromium.launch_persistent_context(
            profile,
            executable_path=CHROMIUM,
            headless=True,
            args=[f"--disable-extensions-except={tree}", f"--load-extension={tree}", *QUIET_ARGS],
            viewport={"width": 720, "height": 400},
            device_scale_factor=1,
        )
        try:
            try:
                worker = (
                    context.service_workers[0]
                    if context.service_workers
                    else context.wait_for_event("serviceworker", timeout=10_000)
                )
            except PlaywrightTimeoutError:
                raise RuntimeError(
                    f"no service worker from {tree}: background.js or a module it imports "
                    "(src/agent/*.js) is missing or fails to load"
                ) from None
            extension_id = urlparse(worker.url).hostname
            page = context.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            # A module that fails to load shows up only as a console error, not a page error.
            page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
            page.goto(f"chrome-extension://{extension_id}/inspector.html")
            try:
                # inspector.js sets this after its first render; wait_for_function is blocked by CSP.
                page.wait_for_selector("body[data-rendered]", timeout=10_000)
            except PlaywrightTimeoutError:
                raise RuntimeError(f"inspector page did not render; page errors: {errors}") from None
            if errors:
                raise RuntimeError(f"inspector page reported errors: {errors}")
            out.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(out), full_page=True)
        finally:
            context.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tree", nargs="?", type=Path, default=REPO / "extension" / "chrome")
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "inspector.png")
    args = parser.parse_args()
    print(make_screenshot(args.tree, args.out))


if __name__ == "__main__":
    main()
