"""What the engine kinds share to apply a second environment (``project.environments``).

Each kind says in its ``environment_reach`` which settings it applies and how; the code they
put into a realm (a clock that starts elsewhere, ``navigator.webdriver`` false where the browser
offers no switch) is made here, once.
"""

from __future__ import annotations

import os
import re

from ..project.environments import Environment
from .base import js_source

CHROME_VERSION = re.compile(r"(\d+)\.\d+\.\d+\.\d+")


def clock_script(start_ms: int) -> str:
    """Statement that moves the realm's ``Date`` to a clock started at ``start_ms``."""
    return f"({js_source('environment-clock.js')})({int(start_ms)});\n"


WEBDRIVER_FALSE = ("Object.defineProperty(Object.getPrototypeOf(navigator), \"webdriver\", "
                   "{ get: function webdriver() { return false; }, configurable: true, enumerable: true });\n")


def realm_prelude(environment: Environment | None, *, webdriver: bool) -> str:
    """Code run in an extension realm before its own scripts: the clock, and with ``webdriver``
    the ``navigator.webdriver`` getter (for browsers that cannot turn it off themselves)."""
    if environment is None:
        return ""
    start = environment.start_ms
    code = clock_script(start) if start is not None else ""
    if webdriver and environment.webdriver is False:
        code += WEBDRIVER_FALSE
    return code


def process_environment(environment: Environment | None) -> dict[str, str | float | bool] | None:
    """The harness's own environment with the zone and language variables of ``environment``
    (None: inherit unchanged)."""
    if environment is None or not environment.worker_variables():
        return None
    return {**os.environ, **environment.worker_variables()}


def normal_chrome_user_agent(version: str | None) -> str | None:
    """The user agent a normal (non-headless) Chrome of ``version`` sends on Linux: the reduced
    form, with the major version only, as Chromium's headless one but for ``HeadlessChrome``."""
    match = CHROME_VERSION.search(version or "")
    if match is None:
        return None
    return (f"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
            f"Chrome/{match[1]}.0.0.0 Safari/537.36")


def has_language(locale: str, installed: set[str]) -> bool:
    """Whether a browser whose installed UI languages are ``installed`` (``de``, ``pt-BR``) can
    read an extension's ``_locales/`` folder for ``locale``: the same language and region, or for
    a folder of a language alone (``de``), any form of that language (``de`` or ``de-AT``: both
    browsers fall back from the region to the language). ``en-US`` is built into both."""
    wanted = locale.replace("_", "-").lower()
    names = {name.replace("_", "-").lower() for name in installed} | {"en-us"}
    if "-" in wanted:
        return wanted in names
    return any(name.split("-")[0] == wanted for name in names)
