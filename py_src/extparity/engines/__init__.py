"""Engines that run the extension's modules over a case list (see ``base.Engine``).

Engine classes load lazily: importing ``extparity.engines.base`` (or this package) must not
pull in Playwright or QuickJS, so the Python-only path works without them.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from .base import Engine, EngineRun, EntryPoint, ModuleConfig

_LAZY = {
    "ChromiumEngine": ".chromium_engine",
    "FirefoxEngine": ".firefox_engine",
    "QuickJSEngine": ".quickjs_engine",
}

__all__ = ["ChromiumEngine", "Engine", "EngineRun", "EntryPoint", "FirefoxEngine", "ModuleConfig",
           "QuickJSEngine"]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(_LAZY[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
