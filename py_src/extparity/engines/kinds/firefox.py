"""Firefox: the extension installed as an add-on in stock Firefox ESR, driven over WebDriver BiDi.

Why it looks different from the Chromium kind: BiDi (the only Playwright route to a stock
Firefox here) refuses to navigate to moz-extension:// pages and hides extension contexts, so
nothing can be evaluated in the extension's origin from outside. The extension runs the cases
itself, through a probe, and reports over loopback HTTP.

What the harness changes, in the packed copy only (the tree on disk is never touched):

* adds ``extparity-sentinel.js`` first and ``extparity-probe.js`` last among the background's
  scripts (``background.scripts`` in the manifest, or ``<script>`` tags in the packed copy of a
  ``background.page``, referenced from the add-on's root so that a page in any folder loads
  them); the sentinel reports that it runs, the page's load event and a background that throws
  at start-up, so a page that never ran the harness's scripts is named within seconds; the probe
  adds one ``<iframe>`` per path to the background document, a page of the harness's whose
  script runs that path's cases: the module path's (``extparity-module.html``) imports the entry
  modules there, in a realm of their own under the purity guard, as Chromium's page does, and
  not in the background's, where the extension's own glue runs;
* when the manifest has no ``browser_specific_settings.gecko.id``, adds one (Firefox installs an
  add-on from a profile only under its id). No permission, CSP or other key changes (but the
  content path's one content script, below): the server's CORS headers make the loopback
  fetches legal as shipped.
* via messages (``via = "message"``), the frame is ``extparity-messenger.html``, and its
  script (``extparity-messenger.js``, the probe's loop) sends each case with
  ``browser.runtime.sendMessage``: an extension's background cannot message itself, a frame of
  its own origin can. The module hashes are then those of the scripts the background loads,
  read statically from the manifest and hashed from the bytes Firefox serves (Firefox has no
  DevTools Protocol here to list what it parsed).
* from a content script (``sender = "content"``), a second frame,
  ``extparity-content-messenger.html``, runs the cases, and its ``send`` goes through the server
  to ``extparity-content.js``, a content script added to the manifest with the same ``matches``
  as the extension's first one (so it reaches no other site), in a tab the harness opens at that
  pattern and serves itself; that script sends each message, so the background sees a content
  script's sender. (Messages and replies cross as JSON text: values JSON cannot carry do not.)

The entry modules are imported from their moz-extension:// URLs and every module of the graph
is hashed from the bytes Firefox serves, so a packing mistake shows up as a hash mismatch. The
add-on's origin UUID is pinned so that runs are reproducible. One session is one Firefox; it
serves any number of chunks (the probe long-polls), so a fuzzer never restarts the browser.
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib.metadata
import json
import re
import secrets
import subprocess
import threading
import time
import uuid
import zipfile
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from ...project.environments import NORMAL
from ...project.manifest import load_manifest
from ..base import Batch, EngineStartError, SessionBroken, WireCase, js_source, wire_json
from ..environment import has_language, process_environment, realm_prelude
from ..browser import (BrowserEngine, BrowserLaunch, BrowserSession, bind_expression, bounded, probe_config,
                       realm_code)
from ..content_page import content_script_url, serve_content_page

SENTINEL, PROBE = "extparity-sentinel.js", "extparity-probe.js"
# The harness's frame of each path, which runs its probe: (page, script).
FRAMES = {"module": ("extparity-module.html", "extparity-module.js"),
          "message": ("extparity-messenger.html", "extparity-messenger.js"),
          "content": ("extparity-content-messenger.html", "extparity-content-messenger.js")}
CONTENT_RELAY = "extparity-content.js"
ADDED = (SENTINEL, PROBE, CONTENT_RELAY, *(name for pair in FRAMES.values() for name in pair))
RUNTIME_SEND = "(message) => browser.runtime.sendMessage(message)"
# The content path's messenger sends through the server's relay (extparity-content.js answers).
RELAYED_SEND = f'({js_source("firefox-relayed-send.js")})(ENDPOINT + "send")'
# How long the relay content script may take to run once its tab has loaded, and how long a
# message may wait for its reply there (a case's own time-out usually ends the wait first).
RELAY_WAIT_S, RELAY_REPLY_S = 15.0, 120.0
LONG_POLL_S = 20.0
# Playwright 1.65 sends emulation.setMediaFeaturesOverride over BiDi, which Firefox ESR 153 does
# not know: its sessions then crash mid-run (seen with 1.65.2). Newer Firefoxes are not refused.
BIDI_BREAK_PLAYWRIGHT, BIDI_BREAK_NEWEST_FIREFOX = (1, 65), 153
# Once Firefox is up (Playwright's launch returned), its background has usually run the sentinel
# already; this much longer without it means the page never loaded the harness's scripts. Long
# enough for a loaded machine (two cores, eight engines starting), far below the start-up limit.
SENTINEL_WAIT_S = 15.0


class FirefoxLaunch(BrowserLaunch):
    """Firefox with the packed add-on installed in a fresh profile, its loopback server, and one
    channel of that server for each path the launch was prepared for (``paths``). The launch
    call is left running: the probes report before Playwright's launch returns, and each session
    waits for its own channel (``FirefoxSession.attach``)."""

    engine: "FirefoxEngine"

    async def start(self) -> None:
        self.phase = "checking Playwright against this Firefox"
        refuse_known_broken_pair(self.engine.executable)
        self.phase = "packing the add-on"
        subjects = {path: self.engine.subject_for(path) for path in self.paths}
        self.server = ProbeServer({path: probe_config(subject) for path, subject in subjects.items()}, self.pages)
        self.addon = pack_xpi(self.engine.tree, self.profile / "extensions", self.server, subjects,
                              realm_prelude(self.engine.environment, webdriver=True))
        self.phase = "launching Firefox"
        from playwright.async_api import async_playwright  # loaded when a browser starts, never before

        self.playwright = await async_playwright().start()
        prefs = {**firefox_prefs(self.addon.gecko_id), **self.engine.environment_prefs(),
                 **self.engine.options.get("prefs", {})}
        variables = process_environment(self.engine.environment)
        # no_viewport: Playwright then sends no browsingContext.setViewport, which fails the whole
        # launch when a browsing context it targets goes away meanwhile (the add-on's frames and
        # tabs come and go at start-up: "Protocol error (browsingContext.setViewport): unknown
        # error", seen once in the WXT example's gate). No verdict depends on a window's size.
        self.launch = asyncio.ensure_future(self.playwright.firefox.launch_persistent_context(
            str(self.profile), channel="moz-firefox", executable_path=self.engine.executable, headless=True,
            firefox_user_prefs=prefs, args=self.engine.extra_args, timeout=self.engine.startup_timeout_s * 1000,
            env=variables, no_viewport=True))
        self.launched_at: float | None = None

    async def page_scripts(self) -> dict[str, dict[str, str]]:
        """``{page: {script: sha256}}`` from the add-on's own report (js/firefox-page-recorder.js),
        which it starts once told: in a launch of the run's, only after its cases are done."""
        self.phase = "opening the add-on's pages"
        self.server.start_recording()
        while self.server.page_scripts is None:  # the recorder runs after the background's scripts, even throwing ones
            if self.launch.done() and (failure := self.launch.exception()) is not None:
                raise failure
            await asyncio.sleep(0.05)
        report = self.server.page_scripts
        if report.get("error"):
            raise EngineStartError(f"opening the add-on's pages: {report['error']}")
        return {page: dict(sorted(scripts.items())) for page, scripts in report["pages"].items()}

    async def stop(self) -> None:
        """No graceful close: Firefox spends 1-2.5 s shutting down a profile that is deleted
        next (and Playwright's launch often returns only after the cases have run). Stopping
        Playwright kills the browser's process group at once and removes its own files."""
        if getattr(self, "server", None) is not None:
            self.server.closed = True  # a session waiting for a chunk hears it at once
        if getattr(self, "playwright", None) is not None:
            await self.playwright.stop()
        launch = getattr(self, "launch", None)
        if launch is not None:  # whatever it ends in is the browser going away: ended and retrieved,
            launch.cancel()     # so asyncio prints nothing about it at exit
            await asyncio.gather(launch, return_exceptions=True)
        if getattr(self, "server", None) is not None:
            self.server.close()


class FirefoxEngine(BrowserEngine):
    OPTIONS = {**BrowserEngine.OPTIONS, "prefs": dict}
    EXTENSION = "firefox"
    RECORDS_PAGE_SCRIPTS = True
    kind = "firefox"
    default_executable = "/usr/bin/firefox-esr"
    protocol = "webdriver-bidi (channel moz-firefox)"
    launch_class = FirefoxLaunch

    def subject_for(self, path: str) -> dict[str, Any]:
        """The subject as an engine of this tree that takes ``path`` sees it: a shared launch
        packs the probes of every path its engines take (a content script's messages are the
        message path's)."""
        via = "message" if path == "content" else path
        if via == self.via:
            return self.subject()
        return type(self)(self.name, self.project, self.tree_name, {**self.options, "via": via}).subject()

    def open(self) -> "FirefoxSession":
        return FirefoxSession(self)

    # Firefox keeps no resource timing for a page's moz-extension:// loads (checked: an empty
    # list beside four imported modules), so what a page ran is read from its <script> elements.
    PAGE_SCRIPTS_SEEN = ("<script> element", "<script> elements")

    def record_page_scripts(self, pages: list[str], content: bool,
                            launch: BrowserLaunch | None = None) -> dict[str, dict[str, str]]:
        """The scripts each page holds once settled, in ``launch`` (the gate's run's browser, once
        every engine's cases are done: a page's code must not reach an engine's cases) when its
        add-on was packed to record these pages, else in a launch of its own. Content scripts are
        not opened here: the harness cannot read their world in Firefox."""
        opened = (launch if isinstance(launch, FirefoxLaunch) and launch.pages == tuple(pages)
                  else FirefoxLaunch(self, (), tuple(pages)))
        try:
            budget = self.startup_timeout_s + len(pages) * 20
            return opened.loop.call(opened.page_scripts, budget)
        except TimeoutError:
            errors = opened.server.background_errors
            raise EngineStartError(f"the add-on reported no page within {budget:g}s"
                                   + (f"; its background reported: {' | '.join(errors[:3])}" if errors else "")) from None
        finally:
            if opened is not launch:
                opened.close()

    def environment_reach(self, environment) -> dict[str, str]:
        """Verified on Firefox ESR 153 over BiDi (docs/message-path.md, "Second environments"): Playwright's clock,
        locale and time zone cannot reach an add-on's background there, so the environment is
        the browser's prefs and process environment, and the harness's sentinel for the rest."""
        reach = {
            "locale": "intl.locale.requested, intl.accept_languages, LANG and LANGUAGE (navigator.language; Intl and "
                      "the add-on's own _locales/ follow the UI language, which needs that language's pack installed)",
            "timezone": "TZ in the browser's environment",
            "date": "the harness's clock, started in the background by the sentinel before the add-on's scripts, and "
                    "in the harness's frames before their probe",
            "user_agent": "general.useragent.override (a headless Firefox already sends the normal user agent)",
            "webdriver": "the sentinel redefines navigator.webdriver in the background (under WebDriver BiDi Firefox "
                         "keeps it true; dom.webdriver.enabled=false does not change that)",
        }
        return {setting: how for setting, how in reach.items() if setting in environment.settings()}

    def ui_language_missing(self, locale: str) -> str | None:
        """Firefox picks ``_locales/`` by its UI language, which ``intl.locale.requested`` can set
        only to a language whose language pack is installed beside the binary (Debian:
        browser/extensions/langpack-de@firefox-esr.mozilla.org.xpi, from firefox-esr-l10n-de)."""
        binary = Path(self.executable).resolve()
        folders = [binary.parent / "browser" / "extensions", binary.parent / "distribution" / "extensions"]
        packs = {p.name[len("langpack-"):].split("@")[0] for f in folders for p in f.glob("langpack-*@*.xpi")}
        if has_language(locale, packs):
            return None
        return (f"Firefox has no {locale} language pack (none in {' or '.join(map(str, folders))}; "
                f"Debian packages them as firefox-esr-l10n-*)")

    def environment_prefs(self) -> dict[str, Any]:
        environment = self.environment
        prefs: dict[str, Any] = {}
        if environment is not None and environment.locale:
            prefs.update({"intl.locale.requested": environment.locale, "intl.accept_languages": environment.locale})
        if environment is not None and environment.user_agent and environment.user_agent != NORMAL:
            prefs["general.useragent.override"] = environment.user_agent
        return prefs


class FirefoxSession(BrowserSession):
    """One engine's channel of the launch's probe server: the module probe's frame in the
    background document, or the messenger frame that sends each case to the background."""

    engine: FirefoxEngine
    launch: FirefoxLaunch

    async def attach(self) -> None:
        launch, server = self.launch, self.launch.server
        self.channel = server.channels[self.engine.path]
        self.phase = "waiting for the extension's background"
        # The probe reports before Playwright's launch call returns: wait for whichever says more.
        while not self.channel.ready and not self.channel.fatal:
            if launch.launch.done() and (failure := launch.launch.exception()) is not None:
                raise failure
            now = time.monotonic()
            if launch.launched_at is None and launch.launch.done():
                launch.launched_at = now
            if not server.sentinel_ran and launch.launched_at is not None and now - launch.launched_at > SENTINEL_WAIT_S:
                raise EngineStartError(self.scripts_not_run(f"within {SENTINEL_WAIT_S:g}s of Firefox's start-up"))
            loaded_at = server.page_loaded_at
            if not server.probe_ran and loaded_at is not None and now - loaded_at > SENTINEL_WAIT_S:
                raise EngineStartError(self.scripts_not_run(f"within {SENTINEL_WAIT_S:g}s of its load event"))
            await asyncio.sleep(0.02)
        if self.channel.fatal:
            await asyncio.sleep(0.3)  # the sentinel's report of the same failure says more
        if server.background_errors:
            raise EngineStartError("the extension's background failed at start-up: "
                                   + " | ".join(server.background_errors[:3]))
        if self.channel.fatal:
            raise EngineStartError(f"probe in the extension's background: {self.channel.fatal}")
        self.module_hashes = {path: digest for path, digest in self.channel.hashes.items() if path not in ADDED}
        self.engine.browser_version = self.channel.browser_version
        if self.engine.path == "content":
            await self.open_content_tab()

    async def open_content_tab(self) -> None:
        """A tab at a web page where the extension's content scripts run, served by the harness,
        and the relay content script there ready to send the messenger's messages."""
        url, pattern = content_script_url(self.engine.tree)
        self.phase = f"opening {url}, where the extension's content script runs"
        context = await self.launch.launch  # the launch call's context: the tab is opened from it
        self.tab = await context.new_page()
        await serve_content_page(self.tab, url)
        await self.tab.goto(url, timeout=self.engine.startup_timeout_s * 1000)
        deadline = time.monotonic() + RELAY_WAIT_S
        while self.launch.server.relay.ready_at is None:
            if time.monotonic() > deadline:
                raise EngineStartError(f"no content script of the extension ran in {url} within {RELAY_WAIT_S:g}s "
                                       f"(content_scripts matches {pattern}; the harness's relay beside it never "
                                       "reported)")
            await asyncio.sleep(0.02)

    async def detach(self) -> None:
        tab = getattr(self, "tab", None)
        if tab is not None:
            await bounded(tab.close(), 10, default=None)

    # What WebDriver BiDi lets the harness see of a case in Firefox: the add-on's background and
    # its frames, where the cases run, are hidden from it (see the module's docstring).
    NO_TRACE = ("trace: Playwright records no trace of the add-on's background, where Firefox runs the cases "
                "(WebDriver BiDi hides extension contexts)")
    NO_PAGE = ("screenshot: no page shows this engine's cases in Firefox (they run in the add-on's background); "
               "console: only the background's uncaught errors, as the harness's sentinel reports them")

    async def start_recording(self) -> None:
        """The background's uncaught errors, which the sentinel reports to the probe server, and
        with a content path the tab's console and a screenshot of it."""
        self.console: list[str] = []
        tab = getattr(self, "tab", None)
        if tab is not None:
            tab.on("console", lambda message: self.console.append(f"tab {message.type}: {message.text}"))
            tab.on("pageerror", lambda error: self.console.append(f"tab uncaught: {error}"))

    async def begin_case(self, case_id: str) -> None:
        self.console.clear()
        self.errors_seen = len(self.launch.server.background_errors)

    async def end_case(self, case_id: str) -> tuple[dict[str, bytes], list[str], list[str]]:
        errors = [f"background uncaught: {error}" for error in self.launch.server.background_errors[self.errors_seen:]]
        tab = getattr(self, "tab", None)
        if tab is None:
            return {}, [*self.console, *errors], [self.NO_TRACE, self.NO_PAGE]
        return {"png": await bounded(tab.screenshot(), 30)}, [*self.console, *errors], [self.NO_TRACE]

    def scripts_not_run(self, when: str) -> str:
        """Which of the harness's scripts never reported, from which page they were to load, and
        what the sentinel saw fail to load there."""
        server = self.launch.server
        silent = [name for name, ran in ((SENTINEL, server.sentinel_ran), (PROBE, server.probe_ran)) if not ran]
        # What names the silent scripts first: the background may report more than three errors.
        errors = sorted(server.background_errors, key=lambda error: not any(name in error for name in silent))
        seen = f"; the background reported: {' | '.join(errors[:3])}" if errors else ""
        return (f"{self.launch.addon.background} did not run the harness's {' or '.join('/' + name for name in silent)} "
                f"{when}{seen}")

    def startup_hint(self) -> str:
        server, addon = getattr(self.launch, "server", None), getattr(self.launch, "addon", None)
        if server is None or addon is None:
            return ""
        if server.sentinel_ran and server.probe_ran:
            return "; the harness's scripts ran in the background, but the probe never reported ready"
        if addon_enabled(self.launch.profile, addon.gecko_id):
            return "; " + self.scripts_not_run("although Firefox enabled the add-on")
        return "; " + addon_state(self.launch.profile, addon.gecko_id)

    def run(self, cases: list[WireCase], case_timeout_s: float) -> Batch:
        batch = Batch()
        server = self.launch.server
        result = server.submit(self.channel, wire_json(cases), case_timeout_s)
        if result is None:
            state = "Firefox closed or crashed" if server.closed else f"no answer within {case_timeout_s:g}s"
            batch.broken = SessionBroken("crash" if server.closed else "timeout", state)
        else:
            batch.add_runner_output(result)
        return self.broken(batch)

    def kill(self) -> None:
        self.launch.server.closed = True
        super().kill()


def refuse_known_broken_pair(executable: str) -> None:
    """Fail in one line, before any launch, where this Playwright is known not to drive this Firefox."""
    playwright = importlib.metadata.version("playwright")
    if tuple(int(part) for part in playwright.split(".")[:2]) < BIDI_BREAK_PLAYWRIGHT:
        return
    try:
        said = subprocess.run([executable, "--version"], capture_output=True, text=True, timeout=20).stdout
    except (OSError, subprocess.TimeoutExpired):
        return  # the launch itself reports a missing or hanging browser in its own words
    major = re.search(r"(\d+)\.\d", said)
    if major and int(major[1]) <= BIDI_BREAK_NEWEST_FIREFOX:
        raise EngineStartError(
            f"Playwright {playwright} cannot drive Firefox {major[1]} over WebDriver BiDi (it sends "
            "emulation.setMediaFeaturesOverride, which this Firefox does not know): install "
            "'playwright<1.65' (constraints/debian-browsers.txt) or a newer Firefox")


def firefox_prefs(gecko_id: str) -> dict[str, Any]:
    """Profile prefs that make Firefox enable an unsigned add-on found in the profile."""
    return {
        "xpinstall.signatures.required": False,  # honoured by ESR, not by release builds
        "extensions.autoDisableScopes": 0,
        "extensions.enabledScopes": 15,
        # Pin the moz-extension:// origin so paths in reports are stable from run to run.
        "extensions.webextensions.uuids": json.dumps({gecko_id: str(uuid.uuid5(uuid.NAMESPACE_URL, gecko_id))}),
    }


def addon_enabled(profile: Path, gecko_id: str) -> bool:
    """Whether the profile's add-on database lists the add-on as active."""
    try:
        addons = json.loads((profile / "extensions.json").read_text(encoding="utf-8"))["addons"]
    except (OSError, ValueError, KeyError, TypeError):
        return False
    return any(isinstance(a, dict) and a.get("id") == gecko_id and a.get("active") for a in addons)


def addon_state(profile: Path, gecko_id: str) -> str:
    """What the profile's add-on database says, to tell "not installed" from "probe hung"."""
    try:
        addons = json.loads((profile / "extensions.json").read_text(encoding="utf-8"))["addons"]
    except (OSError, ValueError, KeyError):
        return "add-on state: no readable extensions.json in the profile"
    for addon in addons:
        if addon.get("id") == gecko_id:
            keys = ("active", "userDisabled", "appDisabled", "signedState", "location")
            return "add-on state: " + json.dumps({k: addon.get(k) for k in keys})
    return f"add-on state: {gecko_id} not in the profile's add-on database (manifest rejected?)"


def gecko_id_of(manifest: dict, tree: Path) -> tuple[str, bool]:
    """The add-on id, and whether the harness had to make one up (stable per tree path)."""
    settings = manifest.get("browser_specific_settings") or manifest.get("applications") or {}
    gecko_id = (settings.get("gecko") or {}).get("id") if isinstance(settings, dict) else None
    if isinstance(gecko_id, str) and gecko_id:
        return gecko_id, False
    digest = hashlib.sha256(str(tree.resolve()).encode()).hexdigest()[:16]
    return f"extparity-{digest}@extparity.invalid", True


@dataclass(frozen=True)
class PackedAddon:
    gecko_id: str
    background: str  # where the harness's scripts are referenced, for error messages


def frame_pages(paths: Any) -> list[str]:
    """The harness's frame pages (from the add-on's root) of the paths among ``paths``."""
    return [f"/{FRAMES[path][0]}" for path in sorted(paths) if path in FRAMES]


def probe_script(endpoint: str, subject: dict[str, Any], send: str = RUNTIME_SEND) -> str:
    """The probe's text for one path, reporting to ``endpoint`` (its channel of the server)."""
    return (js_source("firefox-probe.template.js").replace("@@ENDPOINT@@", endpoint)
            .replace("/*@@REALM@@*/", realm_code(subject)).replace("/*@@BIND@@*/", bind_expression(subject))
            .replace("/*@@SEND@@*/", send).replace("/*@@VIA_MESSAGE@@*/false", json.dumps(subject["via"] == "message"))
            .replace("/*@@GUARD@@*/", subject["purity_guard"]))


def harness_files(server: "ProbeServer", subjects: dict[str, dict[str, Any]], prelude: str = "") -> dict[str, str]:
    """What the packed copy gains for the paths in ``subjects`` ("module", "message", "content"):
    the sentinel (``prelude`` first), the frame of each path with its probe (``prelude`` first
    there too: the cases run in the frame's realm), the background script that adds those
    frames, and for the content path the relay content script."""
    added = {SENTINEL: prelude + js_source("firefox-sentinel.js").replace("@@ENDPOINT@@", server.endpoint)}
    for path, (page, script) in FRAMES.items():
        if path in subjects:
            added[page] = f'<!doctype html>\n<meta charset="utf-8">\n<script src="/{script}"></script>\n'
            added[script] = prelude + probe_script(server.channel_endpoint(path), subjects[path],
                                                   send=RELAYED_SEND if path == "content" else RUNTIME_SEND)
    if "content" in subjects:
        added[CONTENT_RELAY] = js_source("firefox-content-relay.js").replace("@@ENDPOINT@@",
                                                                             server.channel_endpoint("content"))
    added[PROBE] = js_source("firefox-frame-host.js").replace("/*@@FRAMES@@*/[]", json.dumps(frame_pages(subjects)))
    if server.pages:
        added[PROBE] += (js_source("firefox-page-recorder.js").replace("@@ENDPOINT@@", server.endpoint)
                         .replace("/*@@PAGES@@*/[]", json.dumps(list(server.pages)))
                         .replace("/*@@EXT_REALM@@*/", js_source("ext-realm.js")))
    return added


def pack_xpi(tree: Path, folder: Path, server: "ProbeServer", subjects: dict[str, dict[str, Any]],
             prelude: str = "") -> PackedAddon:
    """Zip ``tree`` as shipped, plus the sentinel and the probes of ``subjects``' paths; return
    the add-on's id and where its background references them. ``prelude`` runs first in the
    sentinel, before the background's own scripts (a second environment's clock and
    ``navigator.webdriver``)."""
    manifest, error = load_manifest(tree.name, tree)
    if manifest is None:
        raise EngineStartError(error)
    for name in ADDED:
        if (tree / name).exists():
            raise EngineStartError(f"the tree already has a file named {name}")
    background = manifest.get("background")
    if not isinstance(background, dict):
        raise EngineStartError("manifest.json: no background to run the probe in")
    gecko_id, made_up = gecko_id_of(manifest, tree)
    if made_up:
        manifest.setdefault("browser_specific_settings", {}).setdefault("gecko", {})["id"] = gecko_id
    replaced: dict[str, bytes] = {}
    if isinstance(background.get("page"), str):
        page = background["page"]
        try:
            html = (tree / page).read_text(encoding="utf-8")
        except OSError as exc:
            raise EngineStartError(f"background page {page}: {exc.strerror}") from None
        replaced[page] = _with_scripts(html, page).encode("utf-8")
        where = f"the background page {page}"
    elif isinstance(background.get("scripts"), list):
        background["scripts"] = [SENTINEL, *background["scripts"], PROBE]
        where = "background.scripts"
    else:
        raise EngineStartError("manifest.json: Firefox needs background.scripts or background.page "
                               "(a service_worker alone is disabled in Firefox)")
    if "content" in subjects:
        _url, pattern = content_script_url(tree)
        manifest["content_scripts"] = [*manifest["content_scripts"], {"matches": [pattern], "js": [CONTENT_RELAY]}]
    added = harness_files(server, subjects, prelude)
    folder.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(folder / f"{gecko_id}.xpi", "w", zipfile.ZIP_DEFLATED) as zf:
        for path in sorted(tree.rglob("*")):
            rel = path.relative_to(tree).as_posix()
            if path.is_file() and rel != "manifest.json" and rel not in replaced:
                zf.write(path, rel)
        for rel, data in replaced.items():
            zf.writestr(rel, data)
        zf.writestr("manifest.json", json.dumps(manifest, indent=2, ensure_ascii=False))
        for name, text in added.items():
            zf.writestr(name, text)
    return PackedAddon(gecko_id, where)


def _with_scripts(html: str, page: str) -> str:
    """The background page with the sentinel first in <head> and the probe last in <body>.
    Both are referenced from the add-on's root, so a page in any folder loads them."""
    head = re.search(r"<head[^>]*>", html, re.IGNORECASE)
    body_end = html.lower().rfind("</body>")
    if head is None:
        raise EngineStartError(f"background page {page}: no <head> to put the sentinel in")
    sentinel = f'<script src="/{SENTINEL}"></script>'
    probe = f'<script src="/{PROBE}"></script>'
    html = html[:head.end()] + sentinel + html[head.end():]
    body_end = html.lower().rfind("</body>")
    return html + probe if body_end < 0 else html[:body_end] + probe + html[body_end:]


class Channel:
    """One path's share of the probe server: its config, the chunk waiting for its probe, the
    results, and what its probe reported (hashes, ready with the browser's version, fatal)."""

    def __init__(self, config: dict[str, Any]) -> None:
        self.config = json.dumps(config, ensure_ascii=True).encode("ascii")
        self.pending: tuple[int, bytes] | None = None
        self.results: dict[int, str] = {}
        self.next_chunk = 0
        self.ready = False
        self.browser_version: str | None = None  # as the add-on's runtime.getBrowserInfo() says
        self.fatal: str | None = None
        self.hashes: dict[str, str] = {}


class Relay:
    """The content path's runtime messages on their way from its messenger (``POST send``, a JSON
    array of them, which waits for the answers) to the relay content script in the tab
    (``GET relay/next``), and the answers back (``POST relay/reply/K``): bytes as sent, JSON
    text in UTF-8. A text that is not a JSON array tells the messenger why no answer came."""

    def __init__(self) -> None:
        self.waiting: list[tuple[int, bytes]] = []
        self.replies: dict[int, bytes] = {}
        self.next = 0
        self.ready_at: str | None = None  # the page's URL, once the relay content script runs there


class ProbeServer:
    """Loopback HTTP server the sentinel and the probes talk to. A random token in the path keeps
    stray local requests from being mistaken for them; each path's probe has a channel under it
    (``/TOKEN/module/``, ``/TOKEN/message/``), whose chunks wait in a slot the probe long-polls."""

    def __init__(self, configs: dict[str, dict[str, Any]], pages: tuple[str, ...] = ()) -> None:
        self.channels = {path: Channel(config) for path, config in configs.items()}
        self.pages = pages
        self.page_scripts: dict[str, Any] | None = None  # the page recorder's report
        self.recording = False  # whether the page recorder may open the pages (``start_recording``)
        self._lock = threading.Condition()
        self.closed = False
        self.background_errors: list[str] = []
        self.sentinel_ran = False  # the sentinel said it runs
        self.probe_ran = False  # a probe asked for its config
        self.page_loaded_at: float | None = None  # when the sentinel saw the background's load event
        self.relay = Relay()
        self._token = secrets.token_hex(16)
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._httpd.daemon_threads = True
        # A short poll interval: shutting down waits for the serving loop's next poll.
        threading.Thread(target=self._httpd.serve_forever, args=(0.05,), name="extparity-probe-server",
                         daemon=True).start()
        self.endpoint = f"http://127.0.0.1:{self._httpd.server_address[1]}/{self._token}/"

    def channel_endpoint(self, path: str) -> str:
        return f"{self.endpoint}{path}/"

    def submit(self, channel: Channel, cases_json: str, timeout_s: float) -> str | None:
        """Hand one chunk to the channel's probe and wait for its result (None: none came in time)."""
        deadline = time.monotonic() + timeout_s
        with self._lock:
            k = channel.next_chunk
            channel.next_chunk += 1
            channel.pending = (k, f"{k}\n{cases_json}".encode("ascii"))
            self._lock.notify_all()
            while k not in channel.results and not self.closed and not channel.fatal:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._lock.wait(left)
            channel.pending = None
            return channel.results.pop(k, None)

    def start_recording(self) -> None:
        with self._lock:
            self.recording = True
            self._lock.notify_all()

    def _recording_started(self) -> bool:
        """Long-poll: whether the page recorder may start (False: ask again)."""
        deadline = time.monotonic() + LONG_POLL_S
        with self._lock:
            while not self.recording and not self.closed:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._lock.wait(left)
            return self.recording

    def close(self) -> None:
        with self._lock:
            self.closed = True
            self._lock.notify_all()
        self._httpd.shutdown()
        self._httpd.server_close()

    def _take(self, channel: Channel) -> bytes | None:
        deadline = time.monotonic() + LONG_POLL_S
        with self._lock:
            while channel.pending is None and not self.closed:
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                self._lock.wait(left)
            chunk, channel.pending = channel.pending, None
            return chunk[1] if chunk else None

    def _relay_send(self, batch: bytes) -> bytes:
        """Hand one batch of messages to the relay content script and wait for its answers."""
        relay, deadline = self.relay, time.monotonic() + RELAY_REPLY_S
        with self._lock:
            k = relay.next
            relay.next += 1
            relay.waiting.append((k, batch))
            self._lock.notify_all()
            while k not in relay.replies and not self.closed:
                left = deadline - time.monotonic()
                if left <= 0:
                    relay.waiting = [(j, m) for j, m in relay.waiting if j != k]
                    return f"no reply from the content script in the tab within {RELAY_REPLY_S:g}s".encode()
                self._lock.wait(left)
            return relay.replies.pop(k, b"the harness closed its server")

    def _relay_take(self) -> bytes | None:
        deadline = time.monotonic() + LONG_POLL_S
        with self._lock:
            while not self.relay.waiting and not self.closed:
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                self._lock.wait(left)
            if not self.relay.waiting:
                return None
            k, batch = self.relay.waiting.pop(0)
            return f"{k}\n".encode() + batch

    def _relayed(self, route: str, body: bytes) -> bool:
        with self._lock:
            if route.startswith("relay/reply/") and route[12:].isdigit():
                self.relay.replies[int(route[12:])] = body
            elif route == "relay/ready":
                self.relay.ready_at = body.decode("utf-8", errors="replace")[:2000]
            else:
                return False
            self._lock.notify_all()
        return True

    def _route(self, path: str) -> tuple[Channel | None, str] | None:
        """(channel or None for the sentinel's routes, route) of a request path under the token."""
        prefix = f"/{self._token}/"
        if not path.startswith(prefix):
            return None
        name, _, rest = path[len(prefix):].partition("/")
        if name in self.channels and rest:
            return self.channels[name], rest
        return None, path[len(prefix):]

    def _posted(self, channel: Channel | None, route: str, body: str) -> bool:
        with self._lock:
            if channel is not None and route.startswith("result/") and route[7:].isdigit():
                channel.results[int(route[7:])] = body
            elif channel is not None and route == "hashes":
                channel.hashes = json.loads(body)
            elif channel is not None and route == "ready":
                channel.browser_version = json.loads(body).get("version")
                channel.ready = True
            elif channel is not None and route == "fatal":
                channel.fatal = body[:4000]
            elif channel is None and route == "sentinel":
                self.sentinel_ran = True
            elif channel is None and route == "loaded":
                self.page_loaded_at = time.monotonic()
            elif channel is None and route == "pages":
                self.page_scripts = json.loads(body)
            elif channel is None and route == "background-error":
                self.background_errors.append(body[:2000])
            else:
                return False
            self._lock.notify_all()
        return True

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:  # keep test output clean
                pass

            def _reply(self, code: int, body: bytes = b"", ctype: str = "text/plain") -> None:
                self.send_response(code)
                self.send_header("Access-Control-Allow-Origin", "*")
                self.send_header("Access-Control-Allow-Methods", "GET, POST, OPTIONS")
                self.send_header("Access-Control-Allow-Headers", "Content-Type")
                self.send_header("Cache-Control", "no-store")
                if code != 204:
                    self.send_header("Content-Type", f"{ctype}; charset=utf-8")
                    self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if code != 204:
                    self.wfile.write(body)

            def do_OPTIONS(self) -> None:
                self._reply(204)

            def do_GET(self) -> None:
                channel, route = server._route(self.path) or (None, None)
                if channel is not None and route == "config":
                    server.probe_ran = True
                    return self._reply(200, channel.config, "application/json")
                if channel is None and route == "pages/start":
                    return self._reply(200 if server._recording_started() else 204)
                if channel is not None and route == "next":
                    chunk = server._take(channel)
                    return self._reply(200, chunk) if chunk is not None else self._reply(204)
                if channel is not None and channel is server.channels.get("content") and route == "relay/next":
                    batch = server._relay_take()
                    return self._reply(200, batch) if batch is not None else self._reply(204)
                self._reply(404)

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                channel, route = server._route(self.path) or (None, None)
                if route is not None and channel is not None and channel is server.channels.get("content"):
                    if route == "send":
                        return self._reply(200, server._relay_send(raw))
                    if route.startswith("relay/"):
                        return self._reply(204 if server._relayed(route, raw) else 404)
                posted = route is not None and server._posted(channel, route, raw.decode("utf-8", errors="replace"))
                self._reply(204 if posted else 404)

        return Handler
