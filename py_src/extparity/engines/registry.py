"""Engine kinds, found by name (wptrunner's products.py, eshost's agent types).

A kind is a module with one Engine class. Config binds kinds to names, trees and options;
nothing else in the harness names a kind. Kinds are imported only when an engine of that kind
is built, so the Python-only path needs neither Playwright nor any JS binding, and a missing
optional binding is one engine's start-up failure, not the harness's.

A kind outside this table is named as ``package.module:Class`` in the config; its class
follows ``base.Engine`` and declares ``OPTIONS`` and ``NEEDS_TREE`` as these do.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import import_module
from typing import TYPE_CHECKING, Any

from ..project.config import ConfigError

if TYPE_CHECKING:
    from ..project.config import EngineSpec, Project
    from .base import Engine

NUMBER = (int, float)
_BROWSER = {"executable": str, "args": list, "chunk_size": int, "startup_timeout_s": NUMBER, "via": str}
CHOICES = {"via": ("module", "message")}  # options whose value is one of a few words


@dataclass(frozen=True)
class Kind:
    target: str  # "module:Class", relative to this package when it starts with "."
    needs_tree: bool
    options: dict[str, Any]  # option -> accepted type(s)
    install_hint: str = ""  # what to install when the kind's binding is missing


KINDS: dict[str, Kind] = {
    "python": Kind(".kinds.python:PythonEngine", False, {"path": (str, list), "functions": dict}),
    "quickjs": Kind(".kinds.quickjs:QuickJSEngine", True,
                    {"memory_limit": int, "stack_size": int, "chunk_size": int},
                    "pip install quickjs-ng"),
    "v8": Kind(".kinds.v8:V8Engine", True, {"memory_limit": int, "chunk_size": int},
               "pip install 'extparity[engines]' (mini-racer)"),
    "spidermonkey": Kind(".kinds.spidermonkey:SpiderMonkeyEngine", True, {"chunk_size": int},
                         "pip install 'extparity[engines]' (pythonmonkey)"),
    "chromium": Kind(".kinds.chromium:ChromiumEngine", True, {**_BROWSER, "endpoint": str}),
    "firefox": Kind(".kinds.firefox:FirefoxEngine", True, {**_BROWSER, "prefs": dict}),
}


def _custom(kind: str) -> bool:
    return ":" in kind


def known_kind(kind: str) -> bool:
    return kind in KINDS or _custom(kind)


def kind_needs_tree(kind: str) -> bool:
    return KINDS[kind].needs_tree if kind in KINDS else getattr(_load(kind), "NEEDS_TREE", True)


def _load(target: str):
    module_name, _, attribute = target.partition(":")
    package = __package__ if module_name.startswith(".") else None
    return getattr(import_module(module_name, package), attribute)


def check_options(spec: "EngineSpec") -> None:
    """Unknown or mistyped options are config errors naming the engine and key."""
    allowed = KINDS[spec.kind].options if spec.kind in KINDS else getattr(_load(spec.kind), "OPTIONS", {})
    where = f"[tool.extparity.engines.{spec.name}]"
    for key, value in spec.options.items():
        if key not in allowed:
            raise ConfigError(f"{where}: unknown option {key!r} for kind {spec.kind} "
                              f"(it takes {', '.join(sorted(allowed)) or 'no options'})")
        kinds = allowed[key] if isinstance(allowed[key], tuple) else (allowed[key],)
        if not isinstance(value, kinds) or isinstance(value, bool) and bool not in kinds:
            raise ConfigError(f"{where}.{key}: expected {' or '.join(k.__name__ for k in kinds)}, "
                              f"got {type(value).__name__}")
        if key in CHOICES and value not in CHOICES[key]:
            raise ConfigError(f"{where}.{key}: expected one of {', '.join(map(repr, CHOICES[key]))}, got {value!r}")


def engine_class(kind: str) -> type["Engine"]:
    """The class of a kind; a missing binding becomes an ImportError naming what to install."""
    if kind not in KINDS:
        return _load(kind)
    try:
        return _load(KINDS[kind].target)
    except ImportError as exc:
        hint = f"; install it with: {KINDS[kind].install_hint}" if KINDS[kind].install_hint else ""
        raise ImportError(f"engine kind {kind!r} is not available: {exc}{hint}") from None


def build_engine(spec: "EngineSpec", project: "Project") -> "Engine":
    return engine_class(spec.kind)(spec.name, project, spec.tree, spec.options)
