"""Chromium: the unpacked extension, loaded exactly as shipped, in Debian's Chromium.

Why a real browser: V8 inside an extension origin (MV3 CSP, module loading from
chrome-extension://) is what users run. The harness opens a document of the extension's own
origin (its manifest.json, which every extension has), imports the entry modules from there
and hashes every module of the graph from the bytes that origin serves, so the verdicts are
attributable to exact files. Nothing is added to the tree: the harness code (batch runner,
adapters) arrives through ``page.evaluate``, which runs in the page realm via CDP and is not
subject to the extension CSP that forbids eval.
"""

from __future__ import annotations

import asyncio
from typing import Any

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import async_playwright

from .base import Batch, EngineStartError, SessionBroken, WireCase, wire_json
from .browser import BrowserEngine, BrowserSession, adapters_expression, realm_code

HOST_DOCUMENT = "manifest.json"
QUIET = ["--no-sandbox", "--disable-background-networking", "--disable-component-update", "--disable-sync"]
_SETUP_BODY = """
  const urlOf = (path) => chrome.runtime.getURL(path);
  const report = { hashes: {}, error: null };
  try {
    report.hashes = await extparityHashModules(urlOf, cfg.modules);
    const namespaces = await extparityImport(urlOf, cfg.entry_modules);
    const entries = bindEntries((path) => namespaces[path], cfg.entries, ADAPTERS);
    globalThis.__extparity_run = (casesJson) => runBatch(entries, casesJson);
  } catch (e) {
    report.error = String(e);
  }
  return report;
"""
_RUN_CHUNK = "(casesJson) => globalThis.__extparity_run(casesJson)"


class ChromiumEngine(BrowserEngine):
    kind = "chromium"
    default_executable = "/usr/bin/chromium"
    protocol = "cdp"

    def open(self) -> "ChromiumSession":
        return ChromiumSession(self)


class ChromiumSession(BrowserSession):
    engine: ChromiumEngine

    async def start(self) -> None:
        subject = self.engine.subject()
        tree = str(self.engine.tree)
        self.phase = "launching Chromium"
        self.playwright = await async_playwright().start()
        self.context = await self.playwright.chromium.launch_persistent_context(
            str(self.profile), executable_path=self.engine.executable, headless=True,
            args=[f"--disable-extensions-except={tree}", f"--load-extension={tree}", *QUIET, *self.engine.extra_args],
            timeout=self.engine.startup_timeout_s * 1000)
        self.engine.browser_version = self.context.browser.version if self.context.browser else None
        self.phase = "waiting for the extension's service worker"
        worker = next((w for w in self.context.service_workers if w.url.startswith("chrome-extension://")), None)
        if worker is None:
            worker = await self.context.wait_for_event(
                "serviceworker", predicate=lambda w: w.url.startswith("chrome-extension://"),
                timeout=self.engine.startup_timeout_s * 1000)
        self.extension_id = worker.url.split("/")[2]
        self.phase = f"opening chrome-extension://{self.extension_id}/{HOST_DOCUMENT}"
        self.page = self.context.pages[0] if self.context.pages else await self.context.new_page()
        await self.page.goto(f"chrome-extension://{self.extension_id}/{HOST_DOCUMENT}")
        self.phase = "hashing and importing modules"
        setup = (f"async (cfg) => {{\n{realm_code(subject)}\n"
                 f"{_SETUP_BODY.replace('ADAPTERS', adapters_expression(subject))}}}")
        report = await self.page.evaluate(setup, {k: subject[k] for k in ("modules", "entry_modules", "entries")})
        if report["error"]:
            raise EngineStartError(f"{self.phase}: {report['error']}")
        self.module_hashes = report["hashes"]

    def run(self, cases: list[WireCase], case_timeout_s: float) -> Batch:
        batch = Batch()
        try:
            batch.add_runner_output(self.loop.call(lambda: self.page.evaluate(_RUN_CHUNK, wire_json(cases)), case_timeout_s))
        except TimeoutError as exc:
            batch.broken = SessionBroken("timeout", str(exc))
        except PlaywrightError as exc:
            batch.broken = SessionBroken("crash", exc.message.strip().splitlines()[0][:500])
        return batch

    async def stop(self) -> None:
        context = getattr(self, "context", None)
        if context is not None:
            try:
                await asyncio.wait_for(context.close(), 20)
            except Exception:  # closing changes no result; stopping Playwright ends the browser
                pass
        if getattr(self, "playwright", None) is not None:
            await self.playwright.stop()
