"""The Chrome tree's JS modules in in-process engines: QuickJS-ng, V8 and SpiderMonkey.

One loader for the benchmark and the differential checks. Every engine gets the modules the
harness's own linker produces (`extparity.engines.linker.link`, imports rewritten to a registry),
evaluated in dependency order:

* QuickJS-ng (`quickjs`, a project dependency): each linked module through `Context.module`,
  exactly as the harness's QuickJS engine does.
* V8 (`mini-racer`, `from py_mini_racer import MiniRacer`) and SpiderMonkey (`pythonmonkey`):
  optional, measuring only. Neither has a module loader, so each linked module runs as a strict
  function body, its `export` keywords dropped (the linker has already published the exports).

`available(config)` returns `{name: eval}` for the engines installed here; `eval(source)` returns
the value of a JS expression. Pass strings in as ASCII-only JSON and return strings.
"""

from __future__ import annotations

import re

import quickjs

from extparity.engines.linker import REGISTRY, link

_EXPORT = re.compile(r"^(\s*)export\s+(?=function\b|const\b)", re.M)


def linked_sources(config, tree: str = "chrome") -> list[str]:
    return [module.source for module in link(config.tree(tree), config.modules.modules)]


def as_script(module_source: str) -> str:
    """A linked module as a classic script: strict function scope, `export` dropped."""
    return '(function () {\n"use strict";\n' + _EXPORT.sub(r"\1", module_source) + "\n})();"


def quickjs_engine(sources):
    ctx = quickjs.Context()
    ctx.set_time_limit(600)
    ctx.set_memory_limit(2 << 30)
    ctx.eval(f"{REGISTRY} = {{}};")
    for source in sources:
        ctx.module(source)
    return ctx.eval


def v8_engine(sources):
    from py_mini_racer import MiniRacer

    ctx = MiniRacer()
    ctx.eval(f"{REGISTRY} = {{}};")
    for source in sources:
        ctx.eval(as_script(source))
    return lambda source: ctx.eval(source, timeout_sec=600)


def spidermonkey_engine(sources):
    import pythonmonkey

    pythonmonkey.eval(f"{REGISTRY} = {{}};")
    for source in sources:
        pythonmonkey.eval(as_script(source))
    return pythonmonkey.eval


LOADERS = {"quickjs": quickjs_engine, "v8": v8_engine, "spidermonkey": spidermonkey_engine}


def available(config, names=("quickjs", "v8", "spidermonkey"), tree: str = "chrome"):
    """{name: eval} for each engine in `names` that is installed (QuickJS always is)."""
    sources = linked_sources(config, tree)
    engines = {}
    for name in names:
        try:
            engines[name] = LOADERS[name](sources)
        except ImportError:
            continue
    return engines
