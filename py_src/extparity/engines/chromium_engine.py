"""Chromium engine: the unpacked extension, loaded exactly as shipped, in Debian's Chromium.

Why a real browser: V8 inside an extension origin (MV3 CSP, module loading from
chrome-extension://) is what users run. The modules are imported by the extension's own page
from its own origin, and hashed from the bytes that origin serves, so the verdicts are
attributable to exact files. Nothing is added to the tree: the harness code (batch runner,
realm helpers) arrives through ``page.evaluate``, which runs in the page realm via CDP and is
not subject to the extension CSP that forbids eval.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from pathlib import Path
from typing import Any, Mapping, Sequence

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import TimeoutError as PlaywrightTimeoutError
from playwright.async_api import async_playwright

from ._isolated_loop import close_quietly, run_isolated
from .base import BrowserEngine, EngineRun, ModuleConfig, js_source

# Evaluated in inspector.html: hash, import, then keep a runner bound to the entry functions.
_SETUP_BODY = """
  const urlOf = (path) => chrome.runtime.getURL(path);
  const report = { hashes: {}, error: null };
  try {
    report.hashes = await extparityHashModules(urlOf, cfg.modules);
    const entries = await extparityLoadEntries(urlOf, cfg.modules, cfg.entries);
    globalThis.__extparity_run = (casesJson) => runBatch(entries, casesJson);
  } catch (e) {
    report.error = String(e && e.stack || e);
  }
  return report;
"""
_RUN_CHUNK = "(casesJson) => globalThis.__extparity_run(casesJson)"


def _setup_function() -> str:
    return ("async (cfg) => {\n"
            f"const runBatch = {js_source('batch-runner.js')};\n"
            f"{js_source('ext-realm.js')}\n{_SETUP_BODY}}}")


class ChromiumEngine(BrowserEngine):
    """Runs cases inside ``tree`` loaded as an unpacked MV3 extension in headless Chromium."""

    kind = "chromium"

    def __init__(self, name: str, tree: Path | str, config: ModuleConfig, *,
                 executable_path: str = "/usr/bin/chromium", page: str = "inspector.html",
                 chunk_size: int = 500, startup_timeout_s: float = 60.0) -> None:
        super().__init__(name, tree, config, executable_path=executable_path, chunk_size=chunk_size,
                         startup_timeout_s=startup_timeout_s)
        self.page = page

    def run(self, cases: Sequence[Mapping[str, Any]], timeout_s: float) -> EngineRun:
        chunks, run = self.new_run(cases)
        if run.status != "ok":
            return run
        hard = self.startup_timeout_s + timeout_s + 60.0
        try:
            finished, _ = run_isolated(lambda: self._session(chunks, timeout_s, run), hard)
        except Exception as exc:  # driver failure outside the session's own handling
            return run.fail("crashed", f"playwright: {type(exc).__name__}: {exc}")
        if not finished:
            run.fail("timeout", f"browser session still running after {hard:.0f}s; abandoned")
        run.timings["cases_s"] = sum(run.timings["chunks_s"])
        return run

    async def _session(self, chunks: list[str], timeout_s: float, run: EngineRun) -> None:
        started = time.perf_counter()
        startup_deadline = started + self.startup_timeout_s
        left = lambda deadline: max(0.001, deadline - time.perf_counter())  # noqa: E731
        phase = "start-up"
        async with async_playwright() as p:
            with tempfile.TemporaryDirectory(prefix="extparity-chromium-", ignore_cleanup_errors=True) as profile:
                context = None
                try:
                    context = await asyncio.wait_for(p.chromium.launch_persistent_context(
                        profile,
                        executable_path=self.executable_path,
                        headless=True,
                        args=[f"--disable-extensions-except={self.tree}", f"--load-extension={self.tree}",
                              "--no-sandbox", "--disable-background-networking",
                              "--disable-component-update", "--disable-sync"],
                        timeout=self.startup_timeout_s * 1000,
                    ), left(startup_deadline))
                    self._browser_version = context.browser.version if context.browser else None
                    phase = "waiting for the extension service worker"
                    worker = next((w for w in context.service_workers
                                   if w.url.startswith("chrome-extension://")), None)
                    if worker is None:
                        worker = await context.wait_for_event(
                            "serviceworker", predicate=lambda w: w.url.startswith("chrome-extension://"),
                            timeout=left(startup_deadline) * 1000)
                    ext_id = worker.url.split("/")[2]
                    phase = f"opening chrome-extension://{ext_id}/{self.page}"
                    page = context.pages[0] if context.pages else await context.new_page()
                    await page.goto(f"chrome-extension://{ext_id}/{self.page}",
                                    timeout=left(startup_deadline) * 1000)
                    phase = "hashing and importing modules"
                    report = await asyncio.wait_for(
                        page.evaluate(_setup_function(), self.config.to_json()), left(startup_deadline))
                    run.module_hashes = report["hashes"]
                    if report["error"]:
                        run.fail("crashed", f"{phase}: {report['error']}")
                        return
                    run.timings["startup_s"] = time.perf_counter() - started
                    cases_deadline = time.perf_counter() + timeout_s
                    for index, cases_json in enumerate(chunks):
                        phase = f"chunk {index}"
                        t0 = time.perf_counter()
                        result = await asyncio.wait_for(page.evaluate(_RUN_CHUNK, cases_json),
                                                        left(cases_deadline))
                        run.timings["chunks_s"].append(time.perf_counter() - t0)
                        run.add_batch(result)
                except (asyncio.TimeoutError, PlaywrightTimeoutError) as exc:
                    run.fail("timeout", f"{phase}: timed out ({type(exc).__name__})")
                except PlaywrightError as exc:
                    run.fail("crashed", f"{phase}: {exc.message.strip()[:2000]}")
                finally:
                    await close_quietly(context)

