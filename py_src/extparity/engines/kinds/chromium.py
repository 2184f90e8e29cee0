"""Chromium: the unpacked extension, loaded exactly as shipped, in Debian's Chromium.

Why a real browser: V8 inside an extension origin (MV3 CSP, module loading from
chrome-extension://) is what users run. The harness opens a document of the extension's own
origin (its manifest.json, which every extension has), imports the entry modules from there
and hashes every module of the graph from the bytes that origin serves, so the verdicts are
attributable to exact files. Nothing is added to the tree: the harness code (batch runner,
adapters) arrives through ``page.evaluate``, which runs in the page realm via CDP and is not
subject to the extension CSP that forbids eval. Cases then run after one task boundary, where
the page's CSP applies again, so the subject cannot use ``eval`` here either.

Start-up problems are Chromium's own words, within seconds: a load error is read from the
profile's ``chrome_debug.log`` (``--enable-logging``), and a service worker that threw at
start-up is "redundant", with its uncaught error in the same log. Automation is hidden from
the subject where Chromium allows it (``navigator.webdriver`` is false).

With the ``endpoint`` option the browser runs elsewhere: a Chromium someone started with
``--remote-debugging-port`` and ``--load-extension`` (on a grid machine, in a container) is
reached with Playwright's ``connect_over_cdp``. Its copy of the extension must be the same bytes
as the configured tree: the module hashes are taken from what that browser serves, as always.

Via messages (``via = "message"``), the host document sends each case to the extension's
service worker with ``chrome.runtime.sendMessage``, and the module hashes are those of every
script the worker itself loaded: a DevTools session on the worker replays
``Debugger.scriptParsed`` for each, whose ``hash`` is the SHA-256 of the bytes V8 compiled.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import re
import shutil
import time
from pathlib import Path
from typing import Any

from ...project.environments import NORMAL
from ...project.manifest import load_manifest
from ..base import BLOCK_COVERAGE, Batch, EngineStartError, SessionBroken, WireCase, executable_version, wire_json
from ..environment import clock_script, normal_chrome_user_agent, process_environment
from ..browser import (BrowserEngine, BrowserLaunch, BrowserSession, bind_expression, bounded, probe_config,
                       realm_code)
from ..content_page import content_script_url, serve_content_page

HOST_DOCUMENT = "manifest.json"
LAUNCH_ARGS = ["--no-sandbox", "--disable-background-networking", "--disable-component-update", "--disable-sync",
               "--disable-blink-features=AutomationControlled", "--enable-logging", "--v=0"]
WORKER_WAIT_S = 5.0
# A page's scripts are read once it has loaded and no script came for PAGE_QUIET_S (at most
# PAGE_WAIT_S), then again after a day of its virtual time (LATER_MS), so that a load put off by a
# timer (4 s, an uptime switch, hours) happens while the check watches. Not seen: code loaded on
# input, later than a day, or behind timers that keep virtual time from reaching a day within
# PAGE_WAIT_S of real time (a busy interval; a day of the bundled popup takes 0.2 s).
PAGE_QUIET_S, PAGE_WAIT_S = 0.3, 3.0
LATER_MS = 86_400_000
CODE_FROM_STRING = "(code from a string)"
_SETUP_BODY = """
  const urlOf = (path) => chrome.runtime.getURL(path);
  const report = { hashes: {}, error: null };
  try {
    report.hashes = await extparityHashModules(urlOf, cfg.hash_modules);
    GUARD
    const namespaces = await extparityImport(urlOf, cfg.import_modules);
    const send = SEND;
    const entries = BIND;
    globalThis.__extparity_run = (casesJson) => runBatch(entries, casesJson);
  } catch (e) {
    report.error = String(e);
  }
  return report;
"""
# The purity guard (js/purity-guard.js) goes in once the modules are hashed (the digest is
# `crypto.subtle`, which it refuses) and before they are imported, so that their top level runs
# under it as in the headless engines. Via messages it guards the page's message adapter; the
# service worker runs the extension's own code as shipped (docs/gate.md, "purity").
# The setTimeout hop ends the CDP task in which eval is still allowed (the extension's CSP then
# applies to the subject's code as it does for users). A chunk goes through DevTools' own
# Runtime.evaluate, not Playwright's page.evaluate, whose script in the page calls the realm's
# `eval` at each call: under the guard that is the refusal.
_OWN_BYTES = "async () => Array.from(new Uint8Array(await (await fetch(location.href)).arrayBuffer()))"
_PAGE_SEND = "(message) => chrome.runtime.sendMessage(message)"
# From a content script, through the harness: the host page hands each message, as ASCII JSON
# text, to a function the harness exposes, which sends it from the content script's world in the
# tab (``ContentTab``) and hands the reply back the same way ("" for none). Chromium's runtime
# messages are JSON-serialized themselves, so the JSON text changes nothing a message can carry.
_ASCII_JSON = (r"(value) => JSON.stringify(value).replace(/[\u007f-\uffff]/g,"
               r" (ch) => '\\u' + ('0000' + ch.charCodeAt(0).toString(16)).slice(-4))")
_CONTENT_SEND = (f"(message) => globalThis.__extparity_content_send(({_ASCII_JSON})(message))"
                 ".then((text) => text === '' ? undefined : JSON.parse(text))")
_SEND_FROM_CONTENT_WORLD = (f"(text) => chrome.runtime.sendMessage(JSON.parse(text))"
                            f".then((reply) => reply === undefined ? '' : ({_ASCII_JSON})(reply))")
_RUN_CHUNK = ("async (casesJson) => { await new Promise((resolve) => setTimeout(resolve, 0));"
              " return globalThis.__extparity_run(casesJson); }")


class ChromiumLaunch(BrowserLaunch):
    """Chromium with the unpacked tree loaded (or a remote Chromium reached over CDP), up to its
    extension's service worker: what every path into the extension needs first."""

    engine: "ChromiumEngine"

    def __init__(self, engine: "ChromiumEngine", paths: tuple[str, ...], pages: tuple[str, ...] = (),
                 background: bool = True) -> None:
        self.background = background  # wait for the service worker (the pages alone do not need it)
        super().__init__(engine, paths, pages)

    async def start(self) -> None:
        from playwright.async_api import async_playwright  # loaded when a browser starts, never before

        self.playwright = await async_playwright().start()
        self.endpoint = self.engine.options.get("endpoint")
        self.browser: Any = None  # a remote browser, connected to over CDP
        self.browser_version: str | None = None
        self.first_page_taken = False
        if self.endpoint:
            self.phase = f"connecting to {self.endpoint}"
            self.browser = await self.playwright.chromium.connect_over_cdp(
                self.endpoint, timeout=self.engine.startup_timeout_s * 1000)
            self.context = self.browser.contexts[0]
            self.browser_version = self.browser.version
            self.extension_id = await self.find_remote_extension()
        else:
            tree = str(keyed_copy(self.engine.tree, self.engine.options.get("key"), self.profile / KEYED))
            self.phase = "launching Chromium"
            environment_args, environment_options = self.engine.environment_launch()
            self.context = await self.playwright.chromium.launch_persistent_context(
                str(self.profile), executable_path=self.engine.executable, headless=True,
                args=[f"--disable-extensions-except={tree}", f"--load-extension={tree}", *LAUNCH_ARGS,
                      *environment_args, *self.engine.extra_args],
                timeout=self.engine.startup_timeout_s * 1000, **environment_options)
            self.browser_version = self.context.browser.version if self.context.browser else None
            self.extension_id = unpacked_extension_id(Path(tree))
            self.phase = "loading the extension"
            if self.background:
                await self.check_background()
            await self.start_clocks()

    async def start_clocks(self) -> None:
        """A second environment's date: Playwright's clock for the pages, the harness's in the
        service worker (Playwright's clock does not reach workers: microsoft/playwright#31772)."""
        environment = self.engine.environment
        start = environment.start_ms if environment is not None else None
        if environment is None or start is None:
            return
        await self.context.clock.install(time=environment.date)
        for worker in self.context.service_workers:
            if worker.url.startswith(f"chrome-extension://{self.extension_id}/"):
                await bounded(worker.evaluate(f"() => {{ {clock_script(start)} }}"),
                              self.engine.startup_timeout_s)

    async def new_page(self):
        """A page for one session: the persistent context's first tab for the first session of a
        browser launched here, a new tab otherwise (a remote browser's tabs are not ours)."""
        if not self.endpoint and not self.first_page_taken and self.context.pages:
            self.first_page_taken = True
            return self.context.pages[0]
        return await self.context.new_page()

    async def worker_scripts(self) -> dict[str, str]:
        """``{path: sha256}`` of every script the extension's service worker loaded, as V8 saw
        them (``Debugger.scriptParsed`` is replayed for each on ``Debugger.enable``)."""
        prefix = f"chrome-extension://{self.extension_id}/"
        session = await self.worker_devtools()
        try:
            parsed = await session.scripts()
        finally:
            await session.close()
        return {url[len(prefix):]: digest for url, digest in sorted(parsed.items()) if url.startswith(prefix)}

    async def worker_devtools(self) -> "WorkerDebugSession":
        """A DevTools session on the extension's service worker."""
        return await WorkerDebugSession.attach(self.context.browser, f"chrome-extension://{self.extension_id}/")

    async def page_scripts(self, pages: list[str], content: bool) -> dict[str, dict[str, str]]:
        """``{page: {script: sha256}}``: every script each extension page ran (and, with
        ``content``, the extension's code in a tab its content scripts match), as V8 parsed it."""
        found = {}
        for page in pages:
            found[page] = await self._scripts_while_open(f"chrome-extension://{self.extension_id}/{page}")
        if content:
            url, _ = content_script_url(self.engine.tree)
            found[url] = await self._scripts_while_open(url, serve=True)
        return found

    async def _scripts_while_open(self, url: str, serve: bool = False) -> dict[str, str]:
        """The extension's scripts V8 parsed in a tab at ``url``: its load, then until no script
        came for ``PAGE_QUIET_S`` (at most ``PAGE_WAIT_S``), and so again after ``LATER_MS`` of the
        page's virtual time. A script counts when its URL is the extension's, or when it ran in a
        realm of the extension's origin (a page's own world, a content script's world): code from
        a string there has no URL and is named by its hash."""
        origin = f"chrome-extension://{self.extension_id}"
        tab = await self.context.new_page()
        try:
            if serve:
                await serve_content_page(tab, url)
            session = await self.context.new_cdp_session(tab)
            realms: dict[int, bool] = {}  # execution context -> whether the extension's code runs there
            parsed: list[dict] = []
            session.on("Runtime.executionContextCreated", lambda event: realms.__setitem__(
                event["context"]["id"], _extension_realm(event["context"], origin)))
            session.on("Debugger.scriptParsed", lambda event: parsed.append(event))
            await session.send("Runtime.enable")
            await session.send("Debugger.enable")
            expired = asyncio.Event()
            session.on("Emulation.virtualTimeBudgetExpired", lambda event: expired.set())
            await tab.goto(url, wait_until="load", timeout=self.engine.startup_timeout_s * 1000)
            await self._until_quiet(parsed)
            # V8's virtual time, not a clock of the harness's in the page (whose own code would
            # run there): the page's timers fire in order, a fetch holding time back until done.
            await session.send("Emulation.setVirtualTimePolicy",
                               {"policy": "pauseIfNetworkFetchesPending", "budget": LATER_MS})
            try:
                await asyncio.wait_for(expired.wait(), PAGE_WAIT_S)
            except asyncio.TimeoutError:
                pass  # a page that keeps its timers busy: what it loaded so far is what is seen
            await self._until_quiet(parsed)
            scripts = {}
            for script in parsed:
                if script["url"].startswith(origin + "/"):
                    scripts[script["url"][len(origin) + 1:].split("?")[0].split("#")[0]] = script["hash"]
                elif realms.get(script["executionContextId"]):
                    scripts[script["url"] or f"{CODE_FROM_STRING} {script['hash'][:12]}"] = script["hash"]
            return dict(sorted(scripts.items()))
        finally:
            await bounded(tab.close(), 10, default=None)

    @staticmethod
    async def _until_quiet(parsed: list) -> None:
        """Until no script came for ``PAGE_QUIET_S``, at most ``PAGE_WAIT_S``."""
        deadline, seen = time.monotonic() + PAGE_WAIT_S, -1
        while len(parsed) != seen and time.monotonic() < deadline:
            seen = len(parsed)
            await asyncio.sleep(PAGE_QUIET_S)

    async def find_remote_extension(self) -> str:
        """The id of the remote browser's extension whose manifest is the configured tree's."""
        from playwright.async_api import Error as PlaywrightError

        wanted = list((self.engine.tree / "manifest.json").read_bytes())
        ids = sorted({w.url.split("/")[2] for w in self.context.service_workers if w.url.startswith("chrome-extension://")})
        page = await self.context.new_page()
        try:
            for extension_id in ids:
                try:
                    await page.goto(f"chrome-extension://{extension_id}/{HOST_DOCUMENT}", timeout=5000)
                except PlaywrightError:
                    continue
                served = await bounded(page.evaluate(_OWN_BYTES), 5, default=None)
                if served == wanted:
                    return extension_id
        finally:
            await bounded(page.close(), 5, default=None)
        raise EngineStartError(f"no extension in the browser at {self.engine.options['endpoint']} has the manifest of "
                               f"{self.engine.tree} (extensions with a service worker there: {', '.join(ids) or 'none'})")

    async def check_background(self) -> None:
        """Fail within seconds, in Chromium's words, when the extension did not load or its
        service worker failed at start-up; an extension without a background is fine."""
        deadline = time.monotonic() + WORKER_WAIT_S
        declares_worker = _declares_worker(self.engine.tree)
        while True:
            errors = self.log_lines("Extension error: ")
            if errors:
                raise EngineStartError(f"Chromium did not load the extension: {errors[0]}")
            worker = next((w for w in self.context.service_workers
                           if w.url.startswith(f"chrome-extension://{self.extension_id}/")), None)
            if worker is not None:
                state = await bounded(worker.evaluate("() => self.serviceWorker && self.serviceWorker.state"), 2,
                                      default=None)
                if state == "activated":
                    return
                if state == "redundant":
                    uncaught = self.log_lines("Uncaught ")
                    raise EngineStartError("the extension's service worker failed at start-up: "
                                           + (uncaught[0] if uncaught else "its registration became redundant"))
            elif not declares_worker:
                return
            if time.monotonic() > deadline:
                uncaught = self.log_lines("Uncaught ")
                hint = f": {uncaught[0]}" if uncaught else " (see chrome_debug.log with --enable-logging)"
                raise EngineStartError(f"the extension's service worker did not start within {WORKER_WAIT_S:g}s{hint}")
            await asyncio.sleep(0.05)

    def log_lines(self, marker: str) -> list[str]:
        """Lines of this profile's Chromium log that carry ``marker``, from the marker on."""
        try:
            text = (self.profile / "chrome_debug.log").read_text(encoding="utf-8", errors="replace")
        except OSError:
            return []
        return [console_text(line[line.index(marker):].strip())[:1000] for line in text.splitlines() if marker in line]

    async def stop(self) -> None:
        """A browser launched here is not closed gracefully (its profile is deleted next):
        stopping Playwright kills its process group at once and removes Playwright's files.
        A remote browser is disconnected from, never closed."""
        browser = getattr(self, "browser", None)
        if browser is not None:
            await bounded(browser.close(), 10, default=None)
        if getattr(self, "playwright", None) is not None:
            await self.playwright.stop()


class ChromiumEngine(BrowserEngine):
    OPTIONS = {**BrowserEngine.OPTIONS, "endpoint": str, "key": str}
    EXTENSION = "chromium"
    RECORDS_PAGE_SCRIPTS = True
    COVERAGE = BLOCK_COVERAGE
    kind = "chromium"
    default_executable = "/usr/bin/chromium"
    protocol = "cdp"
    launch_class = ChromiumLaunch

    def check_executable(self) -> None:
        if not self.options.get("endpoint"):  # a remote browser's binary is not ours to find
            super().check_executable()

    def open(self) -> "ChromiumSession":
        return ChromiumSession(self)

    PAGE_SCRIPTS_SEEN = ("script V8 parsed", "scripts V8 parsed")

    def record_page_scripts(self, pages: list[str], content: bool,
                            launch: BrowserLaunch | None = None) -> dict[str, dict[str, str]]:
        """The scripts each page ran (``ChromiumLaunch.page_scripts``), in ``launch`` (the
        gate's run's browser, once every engine's cases are done: a page's code, a popup
        messaging the background, must not reach an engine's cases), else in a launch of its own."""
        from playwright.async_api import Error as PlaywrightError

        # Alone, the service worker is not waited for: a broken background is the background check's.
        opened = launch if isinstance(launch, ChromiumLaunch) else ChromiumLaunch(self, (), background=False)
        try:
            budget = self.startup_timeout_s + (len(pages) + content) * (3 * PAGE_WAIT_S + 10)
            return opened.loop.call(lambda: opened.page_scripts(pages, content), budget)
        except PlaywrightError as exc:  # a page that did not open (the extension did not load)
            raise EngineStartError(exc.message.strip().splitlines()[0][:500]) from None
        finally:
            if opened is not launch:
                opened.close()

    def environment_reach(self, environment) -> dict[str, str]:
        """Verified on Chromium 156 with Playwright 1.64 (docs/message-path.md, "Second environments"). A remote
        browser (``endpoint``) was started by someone else: nothing here reaches it."""
        if self.options.get("endpoint"):
            return {}
        reach = {
            "locale": "Playwright's locale (pages; the service worker through the extension tabs in its process), "
                      "--lang, LANG and LANGUAGE",
            "timezone": "Playwright's timezone_id (pages and the service worker) and TZ",
            "date": "Playwright's clock in the page; the harness's clock in the service worker, which Playwright's "
                    "does not reach",
            "user_agent": "--user-agent",
            "webdriver": "--disable-blink-features=AutomationControlled (as always: a worker has no navigator.webdriver)",
        }
        return {setting: how for setting, how in reach.items() if setting in environment.settings()}

    def environment_launch(self) -> tuple[list[str], dict[str, Any]]:
        """Launch arguments and Playwright options of the engine's environment (none without one)."""
        environment = self.environment
        if environment is None:
            return [], {}
        args: list[str] = []
        options: dict[str, Any] = {}
        if environment.locale:
            args.append(f"--lang={environment.locale}")
            options["locale"] = environment.locale
        if environment.timezone:
            options["timezone_id"] = environment.timezone
        if environment.user_agent:
            agent = (normal_chrome_user_agent(executable_version(self.executable))
                     if environment.user_agent == NORMAL else environment.user_agent)
            if agent is None:
                raise EngineStartError(f"no normal user agent: {self.executable} --version names no Chrome version")
            args.append(f"--user-agent={agent}")
        variables = process_environment(environment)
        if variables is not None:
            options["env"] = variables
        return args, options


class ChromiumSession(BrowserSession):
    """One engine's tab in the launch: a document of the extension's origin with the subject
    bound there, through its modules or through the service worker's messages."""

    engine: ChromiumEngine
    launch: ChromiumLaunch

    @property
    def context(self):
        """The browser context of this session's launch (shared with the other engines of its tree)."""
        return self.launch.context

    async def attach(self) -> None:
        launch = self.launch
        subject = self.engine.subject()
        via_message = subject["via"] == "message"
        self.engine.browser_version = launch.browser_version
        if via_message and not _declares_worker(self.engine.tree):
            raise EngineStartError('via = "message": the extension declares no background service worker to message')
        if via_message:
            self.phase = "reading the scripts the service worker loaded"
            self.module_hashes = await bounded(launch.worker_scripts(), self.engine.startup_timeout_s)
        self.phase = f"opening chrome-extension://{launch.extension_id}/{HOST_DOCUMENT}"
        self.page = await launch.new_page()
        await self.page.goto(f"chrome-extension://{launch.extension_id}/{HOST_DOCUMENT}")
        send = _PAGE_SEND
        if self.engine.sender == "content":
            self.phase = "opening a tab where the extension's content script runs"
            self.content = await ContentTab.open(launch, self.engine.tree, self.engine.startup_timeout_s)
            await self.page.expose_function("__extparity_content_send", self.content.send)
            send = _CONTENT_SEND
        self.phase = "hashing and importing modules"
        # Not from a content script: Playwright hands an exposed function's result back through the
        # realm's `eval`, and this page runs only the message adapter (a CDP binding would do).
        guard = "" if self.engine.sender == "content" else subject["purity_guard"]
        body = _SETUP_BODY.replace("SEND", send).replace("BIND", bind_expression(subject)).replace("GUARD", guard)
        setup = f"async (cfg) => {{\n{realm_code(subject)}\n{body}}}"
        config = probe_config(subject)
        if via_message:
            config["hash_modules"] = []  # the worker's own scripts were hashed above
        await self.engine.before_subject_loads(self)
        report = await bounded(self.page.evaluate(setup, config), self.engine.startup_timeout_s)
        if report["error"]:
            raise EngineStartError(f"{self.phase}: {report['error']}")
        self.devtools = await self.context.new_cdp_session(self.page)
        if not via_message:
            self.module_hashes = report["hashes"]

    async def start_recording(self) -> None:
        """A Playwright trace of the context (a chunk per case: a group around its run, the console, DOM
        snapshots and screenshots, for `playwright show-trace`), and the context's console (its
        pages' and, via messages, the service worker's: Playwright reports both) and the page's
        uncaught errors as text."""
        self.console: list[str] = []
        self.context.on("console", lambda message: self.console.append(_console_line(message)))
        self.page.on("pageerror", lambda error: self.console.append(f"page uncaught: {error}"))
        await self.context.tracing.start(screenshots=True, snapshots=True, title=self.engine.name)

    async def begin_case(self, case_id: str) -> None:
        self.console.clear()
        await self.context.tracing.start_chunk(title=case_id)
        # The case runs through DevTools' Runtime.evaluate (``run_chunk``), which a trace does not
        # list as a call: a group named after the case marks its run in the trace's timeline.
        await self.context.tracing.group(f"run case {case_id}")

    async def end_case(self, case_id: str) -> tuple[dict[str, bytes], list[str], list[str]]:
        trace = self.launch.profile / "extparity-trace.zip"  # scratch, removed with the profile
        await self.context.tracing.group_end()
        await bounded(self.context.tracing.stop_chunk(path=str(trace)), 30)
        return {"trace.zip": trace.read_bytes(), "png": await bounded(self.page.screenshot(), 30)}, list(self.console), []

    async def devtools_channel(self) -> Any:
        """A DevTools channel (``send(method, params)``) on the realm that runs this session's
        cases, for an observer such as coverage: its page's CDP session, or, via messages, the
        extension's service worker (``WorkerDebugSession``, a target Playwright cannot address)."""
        if self.engine.via == "message":
            return await self.launch.worker_devtools()
        return await self.context.new_cdp_session(self.page)

    def run(self, cases: list[WireCase], case_timeout_s: float) -> Batch:
        from playwright.async_api import Error as PlaywrightError  # loaded with the browser

        batch = Batch()
        try:
            batch.add_runner_output(self.loop.call(lambda: self.run_chunk(wire_json(cases)), case_timeout_s))
        except TimeoutError as exc:
            batch.broken = SessionBroken("timeout", str(exc))
        except PlaywrightError as exc:
            batch.broken = SessionBroken("crash", exc.message.strip().splitlines()[0][:500])
        except RuntimeError as exc:  # the session was closed under it (an interrupt), or the chunk threw
            batch.broken = SessionBroken("crash", str(exc).strip().splitlines()[0][:500])
        return self.broken(batch)

    async def run_chunk(self, cases_json: str) -> str:
        """The batch runner's output for one chunk, evaluated in the page's main world."""
        done = await self.devtools.send("Runtime.evaluate", {
            "expression": f"({_RUN_CHUNK})({json.dumps(cases_json)})", "awaitPromise": True, "returnByValue": True})
        if "exceptionDetails" in done:
            details = done["exceptionDetails"]
            raise RuntimeError(details.get("exception", {}).get("description") or details.get("text", "threw"))
        return done["result"]["value"]

    async def detach(self) -> None:
        """Close this engine's tab, unless another engine's session goes on in the same browser:
        then the tab stays until the browser stops. Why: closing an extension tab drops the
        locale override of the extension's process, for every tab and the service worker (its
        ``Intl`` went back to en-US under a de-DE environment while the other tab was still
        open; Chromium 156), so the message-path engine would run the rest of its cases in the
        gate's first locale."""
        if self.shared is not None and not self.broke and self.shared.others_remain(self.launch):
            return
        content = getattr(self, "content", None)
        if content is not None:
            await bounded(content.tab.close(), 10, default=None)
        page = getattr(self, "page", None)
        if page is not None:
            await bounded(page.close(), 10, default=None)


def _console_line(message: Any) -> str:
    """A Playwright console message as one line: whose (a page's or the service worker's), its
    type, its text and where in the extension it was written."""
    location = message.location or {}
    source = location.get("url", "").split("/", 3)[-1]
    at = f" ({source}:{location.get('lineNumber', 0) + 1})" if source else ""
    return f"{'page' if message.page is not None else 'service worker'} {message.type}: {message.text}{at}"


CONSOLE_LINE = re.compile(r'(?P<message>.*)", source: (?:chrome-extension://[a-p]{32}/)?(?P<source>.*) \((?P<line>\d+)\)')


def console_text(text: str) -> str:
    """A console line of chrome_debug.log from its message on, as one plain sentence. Chromium
    logs it as ``"MESSAGE", source: URL (LINE)``; cut from the message on, that left a stray
    quote and the extension's URL: ``MESSAGE (src/background.js:19)`` says the same."""
    match = CONSOLE_LINE.fullmatch(text)
    return f"{match['message']} ({match['source']}:{match['line']})" if match else text


class WorkerDebugSession:
    """A DevTools session on a service worker, through a browser-level CDP session.

    Playwright's ``CDPSession`` cannot address a flattened child session, so this attaches with
    ``flatten: false`` and talks through ``Target.sendMessageToTarget`` /
    ``Target.receivedMessageFromTarget``.
    """

    def __init__(self, browser_session, session_id: str) -> None:
        self.cdp, self.session_id = browser_session, session_id
        self._next_id = 0
        self._pending: dict[int, asyncio.Future] = {}
        self.events: list[dict] = []
        browser_session.on("Target.receivedMessageFromTarget", self._received)

    @classmethod
    async def attach(cls, browser, url_prefix: str) -> "WorkerDebugSession":
        cdp = await browser.new_browser_cdp_session()
        targets = (await cdp.send("Target.getTargets"))["targetInfos"]
        target = next((t for t in targets if t["type"] == "service_worker" and t["url"].startswith(url_prefix)), None)
        if target is None:
            await cdp.detach()
            raise EngineStartError("the extension's service worker is not running")
        attached = await cdp.send("Target.attachToTarget", {"targetId": target["targetId"], "flatten": False})
        return cls(cdp, attached["sessionId"])

    def _received(self, event: dict) -> None:
        if event.get("sessionId") != self.session_id:
            return
        message = json.loads(event["message"])
        future = self._pending.pop(message.get("id"), None)
        if future is None:
            self.events.append(message)
        elif not future.done():
            if "error" in message:
                future.set_exception(EngineStartError(f"DevTools: {message['error'].get('message')}"))
            else:
                future.set_result(message.get("result", {}))

    async def send(self, method: str, params: dict | None = None) -> dict:
        self._next_id += 1
        future = asyncio.get_running_loop().create_future()
        self._pending[self._next_id] = future
        await self.cdp.send("Target.sendMessageToTarget", {
            "sessionId": self.session_id,
            "message": json.dumps({"id": self._next_id, "method": method, "params": params or {}})})
        return await future

    async def scripts(self) -> dict[str, str]:
        """``{url: sha256}`` of the scripts the worker parsed (replayed before enable answers)."""
        await self.send("Debugger.enable")
        await self.send("Debugger.disable")
        return {e["params"]["url"]: e["params"]["hash"] for e in self.events
                if e.get("method") == "Debugger.scriptParsed" and e["params"].get("url")}

    async def close(self) -> None:
        try:
            await self.cdp.send("Target.detachFromTarget", {"sessionId": self.session_id})
        finally:
            await self.cdp.detach()


def unpacked_extension_id(tree: Path) -> str:
    """The id Chromium gives an unpacked extension: from its manifest's ``key`` when it has one
    (the id the store's users have), else from its real path; SHA-256 of either, 32 hex digits
    written with the letters a-p. Known before launch, with or without a service worker."""
    manifest, _ = load_manifest("", Path(tree))
    key = (manifest or {}).get("key")
    try:
        identity = base64.b64decode(key, validate=True) if isinstance(key, str) else b""
    except ValueError:  # binascii.Error: Chromium refuses such a manifest, and says so
        identity = b""
    identity = identity or str(Path(tree).resolve()).encode("utf-8")
    digest = hashlib.sha256(identity).hexdigest()[:32]
    return "".join(chr(ord("a") + int(c, 16)) for c in digest)


KEYED = "extparity-keyed-extension"  # inside the launch's profile: removed with it


def keyed_copy(tree: Path, key: str | None, folder: Path) -> Path:
    """The tree to load: itself, or with ``key`` (the engine's ``key`` option) a copy in ``folder``
    whose manifest.json carries it, so that Chromium gives the extension the store's id. Only
    the manifest's bytes differ from the tree's; a manifest that holds another key is refused."""
    if not key:
        return Path(tree)
    try:
        base64.b64decode(key, validate=True)
    except ValueError:
        raise EngineStartError("the `key` option is not base64 (the store's public key, as a manifest's `key` holds it)") from None
    manifest_path = Path(tree) / "manifest.json"
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    if manifest.get("key") not in (None, key):
        raise EngineStartError(f"{manifest_path}: its manifest has a key other than the engine's `key` option: "
                               f"remove one of them")
    shutil.copytree(tree, folder, symlinks=True)
    (folder / "manifest.json").write_text(json.dumps({**manifest, "key": key}, indent=2), encoding="utf-8")
    return folder


class ContentTab:
    """A tab at a web page where the extension's content script runs, and a DevTools session on
    it that evaluates in that content script's world (the isolated world Chromium names after the
    extension's origin). The page is served by the harness (``route``): nothing leaves the
    machine, and the content script runs as it would on that site."""

    def __init__(self, tab: Any, session: Any, context_id: int) -> None:
        self.tab, self.session, self.context_id = tab, session, context_id

    @classmethod
    async def open(cls, launch: ChromiumLaunch, tree: Path, timeout_s: float) -> "ContentTab":
        url, pattern = content_script_url(tree)
        tab = await launch.context.new_page()
        await serve_content_page(tab, url)
        session = await launch.context.new_cdp_session(tab)
        worlds: list[dict] = []
        session.on("Runtime.executionContextCreated", lambda event: worlds.append(event["context"]))
        await session.send("Runtime.enable")
        await tab.goto(url, timeout=timeout_s * 1000)
        origin = f"chrome-extension://{launch.extension_id}"
        deadline = time.monotonic() + WORKER_WAIT_S
        while True:
            own = [w for w in worlds if w.get("origin") == origin and w.get("auxData", {}).get("type") == "isolated"]
            if own:
                return cls(tab, session, own[-1]["id"])
            if time.monotonic() > deadline:
                await tab.close()
                raise EngineStartError(f"no content script of the extension ran in {url} within {WORKER_WAIT_S:g}s "
                                       f"(content_scripts matches {pattern})")
            await asyncio.sleep(0.05)

    async def send(self, text: str) -> str:
        """Send one message (ASCII JSON text) from the content script's world; its reply likewise."""
        done = await self.session.send("Runtime.evaluate", {
            "expression": f"({_SEND_FROM_CONTENT_WORLD})({json.dumps(text)})", "contextId": self.context_id,
            "awaitPromise": True, "returnByValue": True})
        if "exceptionDetails" in done:
            details = done["exceptionDetails"]
            raise RuntimeError(details.get("exception", {}).get("description") or details.get("text", "threw"))
        return done["result"]["value"]


def _extension_realm(context: dict, origin: str) -> bool:
    """Whether the extension's code runs in this execution context: the default world of one of
    its pages, or a content script's world; not Playwright's own utility world."""
    return context.get("origin") == origin and not context.get("name", "").startswith("__playwright")


def _declares_worker(tree: Path) -> bool:
    manifest, _ = load_manifest(tree.name, tree)
    if manifest is None:
        return True  # let the launch fail with Chromium's words
    background = manifest.get("background")
    return isinstance(background, dict) and "service_worker" in background
