"""The Chrome tree's JS modules in in-process engines: QuickJS-ng, V8 and SpiderMonkey.

One loader for the benchmark and the differential checks. Every engine gets the modules the
harness's own linker produces (`extparity.subject.linker.module_graph`, imports rewritten to a
registry), evaluated in dependency order, in process (no worker: these measure the modules):

* QuickJS-ng (`quickjs`): each module's module form through `Context.module`, as the
  harness's QuickJS engine does.
* V8 (`mini-racer`) and SpiderMonkey (`pythonmonkey`), from the `engines` extra: each module's
  script form (a strict function), as the harness's v8 and spidermonkey engines do.

`available(config)` returns `{name: eval}` for the engines installed here; `eval(source)` returns
the value of a JS expression. Pass strings in as ASCII-only JSON and return strings.
"""

from __future__ import annotations

import quickjs

from extparity.subject.linker import PRELUDE, module_graph


def linked_modules(project, tree: str = "chrome"):
    """The tree's modules the entries reach, linked, dependencies first."""
    return module_graph(project.trees[tree], [entry.module for entry in project.entries.values()])


def quickjs_engine(modules):
    ctx = quickjs.Context()
    ctx.set_time_limit(600)
    ctx.set_memory_limit(2 << 30)
    ctx.eval(PRELUDE)
    for module in modules:
        ctx.module(module.module)
        while ctx.execute_pending_job():
            pass
    return ctx.eval


def v8_engine(modules):
    from py_mini_racer import MiniRacer

    ctx = MiniRacer()
    ctx.eval(PRELUDE)
    for module in modules:
        ctx.eval(module.script)
    return lambda source: ctx.eval(source, timeout_sec=600)


def spidermonkey_engine(modules):
    import pythonmonkey

    pythonmonkey.eval(PRELUDE)
    for module in modules:
        pythonmonkey.eval(module.script)
    return pythonmonkey.eval


LOADERS = {"quickjs": quickjs_engine, "v8": v8_engine, "spidermonkey": spidermonkey_engine}


def available(config, names=("quickjs", "v8", "spidermonkey"), tree: str = "chrome"):
    """{name: eval} for each engine in `names` that is installed (QuickJS always is)."""
    modules = linked_modules(config, tree)
    engines = {}
    for name in names:
        try:
            engines[name] = LOADERS[name](modules)
        except ImportError:
            continue
    return engines
