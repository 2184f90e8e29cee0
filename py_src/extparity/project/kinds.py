"""Engine kinds, found by name (wptrunner's products.py, eshost's agent types): the one place
that says what each kind is.

A kind declares where its engine runs (in the harness's process, in a worker process that
loads a host, or in a browser), which browser's extension it loads if any, whether it needs a
tree, and the options it takes. The config validates engine specs here; the worker is told
which host to load from here; the gate and the tests ask here which engines load an extension.

The kinds' code is imported only when an engine of that kind is built, so the Python-only path
needs neither Playwright nor any JS binding, and a missing optional binding is one engine's
start-up failure, not the harness's. This module imports nothing of the engines for that reason:
kinds are named by import path.

A kind outside this table is named as ``package.module:Class`` in the config; its class follows
``engines.base.Engine`` and declares the same facts as class attributes: ``RUNS`` (one of
``RUNS_WHERE``; default in process), ``HOST`` (``"package.module:Class"`` of its worker host,
for ``RUNS = "worker"``: see ``engines.worker.Host``), ``EXTENSION`` (the browser whose
extension it loads, or None), ``NEEDS_TREE`` (default True) and ``OPTIONS``. A worker imports
the host by that name, so its module must be importable there too: installed, or on PYTHONPATH
(the worker inherits the harness's environment, not its ``sys.path``).

The options a built-in kind takes, with their types and meaning, are stated once, in the config's
schema (config.schema.json, one definition per kind); a kind of one's own states them in
``OPTIONS`` (option -> accepted type(s)), checked here since the schema cannot know the class.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib import import_module
from typing import Any

from . import schema
from .errors import ConfigError

IN_PROCESS, IN_WORKER, IN_BROWSER = "process", "worker", "browser"
RUNS_WHERE = (IN_PROCESS, IN_WORKER, IN_BROWSER)
_KINDS_PACKAGE = "extparity.engines.kinds"


@dataclass(frozen=True)
class Kind:
    name: str
    engine: str  # "package.module:Class" of its Engine
    runs: str  # one of RUNS_WHERE
    needs_tree: bool
    options: dict[str, Any]  # option -> accepted type(s); a built-in kind's names only (None): the schema types them
    host: str | None = None  # "package.module:Class" the worker process loads, for kinds that run in one
    extension: str | None = None  # the browser ("chromium", "firefox") whose extension it loads
    install_hint: str = ""  # what to install when the kind's binding is missing

    @property
    def loads_extension(self) -> bool:
        """Whether the engine loads a tree as an installed extension (and can message its background)."""
        return self.extension is not None


def _builtin(module: str, engine: str, runs: str, *, host: str | None = None,
             extension: str | None = None, needs_tree: bool = True, install_hint: str = "") -> Kind:
    target = f"{_KINDS_PACKAGE}.{module}"
    return Kind(module, f"{target}:{engine}", runs, needs_tree, dict.fromkeys(schema.kind_options(module)),
                f"{target}:{host}" if host else None, extension, install_hint)


KINDS: dict[str, Kind] = {kind.name: kind for kind in (
    _builtin("python", "PythonEngine", IN_WORKER, host="PythonHost", needs_tree=False),
    _builtin("quickjs", "QuickJSEngine", IN_WORKER, host="QuickJSHost", install_hint="pip install quickjs-ng"),
    _builtin("v8", "V8Engine", IN_WORKER, host="V8Host", install_hint="pip install 'extparity[engines]' (mini-racer)"),
    _builtin("spidermonkey", "SpiderMonkeyEngine", IN_WORKER,
             host="SpiderMonkeyHost", install_hint="pip install 'extparity[engines]' (pythonmonkey)"),
    _builtin("chromium", "ChromiumEngine", IN_BROWSER, extension="chromium"),
    _builtin("firefox", "FirefoxEngine", IN_BROWSER, extension="firefox"),
)}


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


def _load(target: str):
    module_name, _, attribute = target.partition(":")
    return getattr(import_module(module_name), attribute)


def kind_of(name: str) -> Kind:
    """The kind called ``name``: a built-in one, or ``package.module:Class`` read from its class."""
    if name in KINDS:
        return KINDS[name]
    cls = _load(name)
    runs = getattr(cls, "RUNS", IN_PROCESS)
    if runs not in RUNS_WHERE:
        raise ConfigError(f"kind {name}: RUNS is {runs!r}, not one of {', '.join(RUNS_WHERE)}")
    host = getattr(cls, "HOST", None)
    if runs == IN_WORKER and not host:
        raise ConfigError(f"kind {name}: RUNS = {IN_WORKER!r} needs HOST, the 'package.module:Class' its worker loads")
    return Kind(name, name, runs, getattr(cls, "NEEDS_TREE", True), getattr(cls, "OPTIONS", {}),
                host, getattr(cls, "EXTENSION", None))


def loads_extension(kind: str) -> bool:
    return kind_of(kind).loads_extension


def sends_from_content(kind: str) -> bool:
    """Whether the kind can send a tree's messages from a content script (it takes ``sender``)."""
    return "sender" in kind_of(kind).options


def records_page_scripts(kind: str) -> bool:
    """Whether the kind's engine can open a tree's pages and say which scripts they ran
    (``record_page_scripts(pages, content)``; the gate's page scripts check)."""
    return hasattr(engine_class(kind), "record_page_scripts")


def check_spec(spec: EngineSpec, trees: Any) -> None:
    """What the schema cannot check of an engine spec: its tree is a configured one, and a kind of
    one's own imports, has a tree where it needs one (and none where it does not) and takes only
    the options its class declares, of their types. Each problem is a ConfigError naming the
    engine and key."""
    where = f"[tool.extparity.engines.{spec.name}]"
    try:
        kind = kind_of(spec.kind)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f"{where}.kind: cannot import {spec.kind!r}: {exc}") from None
    if kind.needs_tree:
        if spec.tree is None:
            raise ConfigError(f"{where}: missing key 'tree' (a {spec.kind} engine loads one tree)")
        if spec.tree not in trees:
            raise ConfigError(f"{where}.tree: no tree named {spec.tree!r} in [tool.extparity.trees]")
    elif spec.tree is not None:
        raise ConfigError(f"{where}.tree: a {spec.kind} engine does not load a tree")
    if spec.kind in KINDS:
        return
    for key, value in spec.options.items():
        if key not in kind.options:
            raise ConfigError(f"{where}: unknown option {key!r} for kind {spec.kind} "
                              f"(it takes {', '.join(sorted(kind.options)) or 'no options'})")
        types = kind.options[key] if isinstance(kind.options[key], tuple) else (kind.options[key],)
        if not isinstance(value, types) or isinstance(value, bool) and bool not in types:
            raise ConfigError(f"{where}.{key}: expected {' or '.join(map(schema.python_type, types))}, "
                              f"got {schema.shown(value)}")


def engine_class(kind: str) -> type:
    """The ``engines.base.Engine`` class of a kind; a missing binding becomes an ImportError naming what to install."""
    found = kind_of(kind)
    try:
        return _load(found.engine)
    except ImportError as exc:
        if kind not in KINDS:
            raise
        hint = f"; install it with: {found.install_hint}" if found.install_hint else ""
        raise ImportError(f"engine kind {kind!r} is not available: {exc}{hint}") from None


def build_engine(spec: EngineSpec, project: Any):
    """The engine ``spec`` names for ``project`` (a ``config.Project``), not started: ``open`` starts it."""
    return engine_class(spec.kind)(spec.name, project, spec.tree, spec.options)
