"""Which browser binary a browser engine launches: the config's, else Playwright's own build of
that browser when it is installed, else Debian's.

Why this order: an ``executable`` key is the user's decision and is never second-guessed. Without
one, a team that ran ``playwright install chromium firefox`` expects those builds (the versions
its Playwright was released with), and a Debian machine has its packaged browsers at fixed paths.
Playwright's builds are found where Playwright's own registry puts them: the folder
``PLAYWRIGHT_BROWSERS_PATH`` names (``0``: inside the installed package) or the user's cache, one
folder per browser and revision, the revision read from the installed Playwright's
``browsers.json``, so a build of another Playwright release is never picked up. The run's engine
description says which of the three it was (``executable_source``).
"""

from __future__ import annotations

import importlib.util
import json
import os
import platform
from pathlib import Path

# Playwright's layout of a build inside its folder, per platform (its registry's EXECUTABLE_PATHS).
LAYOUT = {
    ("chromium", "x86_64"): ("chrome-linux64", "chrome"),
    ("chromium", "aarch64"): ("chrome-linux-arm64", "chrome"),
    ("firefox", "x86_64"): ("firefox", "firefox"),
    ("firefox", "aarch64"): ("firefox", "firefox"),
}
CONFIG, PLAYWRIGHT, SYSTEM = "config", "playwright", "debian"


def choose_executable(browser: str, configured: str | None, system_default: str) -> tuple[str, str]:
    """(path, where it came from: "config", "playwright" or "debian") of the binary to launch."""
    if configured:
        return configured, CONFIG
    build = playwright_build(browser)
    return (str(build), PLAYWRIGHT) if build else (system_default, SYSTEM)


def playwright_build(browser: str) -> Path | None:
    """The installed Playwright's own build of ``browser`` ("chromium", "firefox"), if installed."""
    layout = LAYOUT.get((browser, platform.machine())) if platform.system() == "Linux" else None
    revision = _revision(browser)
    if layout is None or revision is None:
        return None
    executable = registry_folder().joinpath(f"{browser}-{revision}", *layout)
    return executable if executable.is_file() and os.access(executable, os.X_OK) else None


def registry_folder() -> Path:
    chosen = os.environ.get("PLAYWRIGHT_BROWSERS_PATH")
    if chosen == "0":
        return _driver_package() / ".local-browsers"
    if chosen:
        return Path(chosen)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "ms-playwright"


def _revision(browser: str) -> str | None:
    try:
        listed = json.loads((_driver_package() / "browsers.json").read_text(encoding="utf-8"))["browsers"]
    except (ImportError, OSError, ValueError, KeyError, TypeError):
        return None
    return next((str(entry["revision"]) for entry in listed if entry.get("name") == browser), None)


def _driver_package() -> Path:
    """Found, not imported: building a browser engine (the gate asks engines it never starts)
    must not load Playwright, which loads only when a browser starts."""
    spec = importlib.util.find_spec("playwright")
    if spec is None or spec.origin is None:
        raise ImportError("playwright is not installed")
    return Path(spec.origin).resolve().parent / "driver" / "package"
