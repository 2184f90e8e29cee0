"""A guard on the suite's tiers, loaded as a pytest plugin by tests/conftest.py: a test that
starts Chromium or Firefox must carry the ``browser`` marker, or the tier that leaves those out
(`make test-fast`) would start browsers after all.

Browsers start by many paths (Playwright in this process, the CLI in a subprocess, a pytest run
inside a test, a venv's extparity), and every path ends in a browser process below this one. So
the guard reads this process's descendants from /proc: at the start and the end of each test,
and every SAMPLE_S between, from a thread. A browser process that both starts and ends between
two samples can be missed; every launch in this suite lives for seconds. A test during whose
setup, call or teardown a browser process appeared, and that is not marked ``browser``, errors
at teardown naming the process. `--version` probes of a browser binary are not launches.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

SAMPLE_S = 0.2
# Executable names of the browsers the engines and Playwright's fixtures launch: Debian's
# (/usr/lib/chromium/chromium, /usr/lib/firefox-esr/firefox-esr) and Playwright's own builds.
BROWSERS = frozenset({"chromium", "chrome", "headless_shell", "chrome-headless-shell", "firefox", "firefox-esr",
                      "firefox-bin"})


class BrowserWatch:
    """New browser processes among this process's descendants, sampled between begin() and end()."""

    def __init__(self, names: frozenset[str] = BROWSERS, root: int | None = None) -> None:
        self.names, self.root = names, os.getpid() if root is None else root
        self.lock = threading.Lock()
        self.parents: dict[int, int] = {}  # every live process read so far -> its parent
        self.browsers: set[int] = set()  # descendants found to be browsers
        self.started: list[str] = []
        self.active = False
        self.stopping = threading.Event()
        self.thread: threading.Thread | None = None

    def begin(self) -> None:
        with self.lock:
            self._sample()  # browsers already running (a session's shared one) are not this test's
            self.started = []
            self.active = True
        if self.thread is None:
            self.thread = threading.Thread(target=self._loop, name="browser-guard", daemon=True)
            self.thread.start()

    def end(self) -> list[str]:
        """The browser processes that appeared since begin(), as "NAME (pid N): ARGS"."""
        with self.lock:
            started = self._sample()
            self.active = False
            return started

    def stop(self) -> None:
        self.stopping.set()

    def _loop(self) -> None:
        while not self.stopping.wait(SAMPLE_S):
            with self.lock:
                if self.active:
                    self._sample()

    def _sample(self) -> list[str]:
        for pid in self._descendants():  # read each time: /usr/bin/chromium is a script that execs the browser
            if pid not in self.browsers and (browser := self._browser(pid)) is not None:
                self.browsers.add(pid)
                self.started.append(browser)
        return list(self.started)

    def _descendants(self) -> list[int]:
        """Only a process not seen before has its parent read: most samples see no new one."""
        live = {int(name) for name in os.listdir("/proc") if name.isdigit()}
        for pid in self.parents.keys() - live:
            del self.parents[pid]
            self.browsers.discard(pid)
        for pid in live - self.parents.keys():
            try:
                stat = Path(f"/proc/{pid}/stat").read_bytes()
            except OSError:  # ended since the listing
                continue
            self.parents[pid] = int(stat[stat.rindex(b")") + 2:].split()[1])  # after "pid (comm) state "
        children: dict[int, list[int]] = {}
        for pid, parent in self.parents.items():
            children.setdefault(parent, []).append(pid)
        found, queue = [], [self.root]
        while queue:
            for child in children.get(queue.pop(), ()):
                found.append(child)
                queue.append(child)
        return found

    def _browser(self, pid: int) -> str | None:
        try:
            name = os.path.basename(os.readlink(f"/proc/{pid}/exe"))
            if name not in self.names:
                return None
            args = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")
        except OSError:  # ended, or not ours to read
            return None
        return None if "--version" in args else f"{name} (pid {pid}): {' '.join(args[1:4]).strip()}"


WATCH = BrowserWatch()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item):
    WATCH.begin()
    return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None):
    result = yield
    started = WATCH.end()
    if started and item.get_closest_marker("browser") is None:
        pytest.fail(f"{item.nodeid} started a browser without the browser marker (add "
                    f"@pytest.mark.browser or the module's pytestmark): {started[0]}"
                    + (f" and {len(started) - 1} more browser processes" if len(started) > 1 else ""), pytrace=False)
    return result


def pytest_unconfigure(config: pytest.Config) -> None:
    WATCH.stop()
