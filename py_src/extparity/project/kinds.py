"""Engine kinds, found by name (wptrunner's products.py, eshost's agent types): the registry maps
each built-in kind's name to its class; everything a kind is, the class declares.

A kind is an ``engines.base.Engine`` subclass, and its class attributes are the one spelling of
what it is, for the built-in kinds as for a kind of one's own (named ``package.module:Class`` in
the config): ``RUNS`` (one of ``RUNS_WHERE``), ``HOST`` (``"package.module:Class"`` of the host
its worker process loads, for ``RUNS = "worker"``: see ``engines.worker.Host``), ``EXTENSION``
(the browser whose extension it loads, or None), ``NEEDS_TREE``, ``OPTIONS`` (option -> accepted
type(s)), ``OPTION_CHOICES`` (option -> the words it takes) and ``INSTALL_HINT``, and the
capabilities the harness asks it for (``engines.base.Engine`` lists them with their defaults).
A worker imports the host by that name, so its module must be importable there too: installed,
or on PYTHONPATH (the worker inherits the harness's environment, not its ``sys.path``).

Why the config imports a kind's class to validate an engine, rather than keep its facts in a
table here: a table beside the classes said the same things twice, and a kind of one's own
could only say them on its class anyway. The price is that a kind's module must be cheap and
safe to import: it imports Playwright or a JS binding only where an engine starts (in a
function, or in the worker's host), so the Python-only path needs neither, and a missing
binding is one engine's start-up failure with the kind's install hint, not a config error.
``tests/test_layout.py`` holds every kind to that. This module imports nothing of the engines
for the same reason: kinds are named by import path, and imported when a config names them.

The options a built-in kind takes, with their types and meaning, are stated for users in the
config's schema (config.schema.json, one definition per kind), which validates them; a test holds
each class's ``OPTIONS`` to it. A kind of one's own is checked here against its ``OPTIONS``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib import import_module
from typing import Any

from . import schema
from .errors import ConfigError

IN_PROCESS, IN_WORKER, IN_BROWSER = "process", "worker", "browser"
RUNS_WHERE = (IN_PROCESS, IN_WORKER, IN_BROWSER)
# What the registry reads of every kind's class (the capabilities are the callers' to read).
FACTS = ("RUNS", "HOST", "EXTENSION", "NEEDS_TREE", "OPTIONS", "OPTION_CHOICES", "INSTALL_HINT")
_KINDS_PACKAGE = "extparity.engines.kinds"

KINDS: dict[str, str] = {
    "python": f"{_KINDS_PACKAGE}.python:PythonEngine",
    "quickjs": f"{_KINDS_PACKAGE}.quickjs:QuickJSEngine",
    "v8": f"{_KINDS_PACKAGE}.v8:V8Engine",
    "spidermonkey": f"{_KINDS_PACKAGE}.spidermonkey:SpiderMonkeyEngine",
    "chromium": f"{_KINDS_PACKAGE}.chromium:ChromiumEngine",
    "firefox": f"{_KINDS_PACKAGE}.firefox:FirefoxEngine",
}


@dataclass(frozen=True)
class EngineSpec:
    """One configured engine: a kind bound to a name, a tree and options."""

    name: str
    kind: str
    tree: str | None
    options: dict[str, Any] = field(default_factory=dict)

    @property
    def via(self) -> str:
        """How a browser engine reaches the subject: "module" imports the entry modules in the
        extension's origin; "message" asks the extension's own background through
        ``runtime.sendMessage``, the path its users' code takes."""
        return self.options.get("via", "module")

    @property
    def sender(self) -> str:
        """Where a message-path engine sends from: "page", an extension page; "content", a content
        script of the extension in a web page's tab, whose messages the background sees with the
        web page's ``sender.url``."""
        return self.options.get("sender", "page")


def engine_class(kind: str) -> Any:
    """The ``engines.base.Engine`` class of a kind: a built-in name or ``package.module:Class``,
    imported now. A class that does not say what it is, or says it wrongly, is a ConfigError
    naming the kind; a module that cannot be imported raises its ImportError."""
    module_name, _, attribute = KINDS.get(kind, kind).partition(":")
    cls = getattr(import_module(module_name), attribute)
    missing = [fact for fact in FACTS if not hasattr(cls, fact)]
    if missing:
        raise ConfigError(f"kind {kind}: {attribute} is not an engine kind (no {', '.join(missing)}): "
                          f"subclass extparity.engines.base.Engine")
    if cls.RUNS not in RUNS_WHERE:
        raise ConfigError(f"kind {kind}: RUNS is {cls.RUNS!r}, not one of {', '.join(RUNS_WHERE)}")
    if cls.RUNS == IN_WORKER and not cls.HOST:
        raise ConfigError(f"kind {kind}: RUNS = {IN_WORKER!r} needs HOST, the 'package.module:Class' its worker loads")
    return cls


def check_spec(spec: EngineSpec, trees: Any) -> None:
    """What the schema cannot check of an engine spec: its tree is a configured one, and a kind of
    one's own imports, has a tree where it needs one (and none where it does not) and takes only
    the options its class declares, of their types. Each problem is a ConfigError naming the
    engine and key."""
    where = f"[tool.extparity.engines.{spec.name}]"
    try:
        kind = engine_class(spec.kind)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f"{where}.kind: cannot import {spec.kind!r}: {exc}") from None
    if kind.NEEDS_TREE:
        if spec.tree is None:
            raise ConfigError(f"{where}: missing key 'tree' (a {spec.kind} engine loads one tree)")
        if spec.tree not in trees:
            raise ConfigError(f"{where}.tree: no tree named {spec.tree!r} in [tool.extparity.trees]")
    elif spec.tree is not None:
        raise ConfigError(f"{where}.tree: a {spec.kind} engine does not load a tree")
    if spec.kind in KINDS:
        return
    for key, value in spec.options.items():
        if key not in kind.OPTIONS:
            raise ConfigError(f"{where}: unknown option {key!r} for kind {spec.kind} "
                              f"(it takes {', '.join(sorted(kind.OPTIONS)) or 'no options'})")
        types = kind.OPTIONS[key] if isinstance(kind.OPTIONS[key], tuple) else (kind.OPTIONS[key],)
        if not isinstance(value, types) or isinstance(value, bool) and bool not in types:
            raise ConfigError(f"{where}.{key}: expected {' or '.join(map(schema.python_type, types))}, "
                              f"got {schema.shown(value)}")
        choices = kind.OPTION_CHOICES.get(key)
        if choices is not None and value not in choices:
            raise ConfigError(f"{where}.{key}: expected one of {', '.join(map(repr, choices))}, got {value!r}")
    if spec.sender == "content" and spec.via != "message":
        raise ConfigError(f'{where}.sender: "content" sends runtime messages, so it needs via = "message"')


def build_engine(spec: EngineSpec, project: Any):
    """The engine ``spec`` names for ``project`` (a ``config.Project``), not started: ``open`` starts it."""
    return engine_class(spec.kind)(spec.name, project, spec.tree, spec.options)
