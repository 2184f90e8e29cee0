"""Child process that runs the modules in one fresh QuickJS context.

Why a separate process: the quickjs binding is C code in our address space (the notes list
inputs that crash it outright), and a segfault or a runaway allocation must become
``status="crashed"`` for this engine, not the end of the whole harness. The parent also gets
a hard wall-clock kill on top of QuickJS's own time limit.

Protocol (all ASCII): stdin is one JSON document
``{"tree", "modules", "entries", "chunks": [ascii case JSON...], "budget_s", "memory_limit",
"stack_size"}``; stdout is one JSON event per line, flushed as it happens, so the parent keeps
every finished chunk even if this process dies mid-way:

* ``{"event": "hashes", "hashes": {...}}`` then ``{"event": "ready", "link_s": s, "at": epoch}``
* ``{"event": "chunk", "index": k, "result": "<batch-runner JSON>", "seconds": s}``
* ``{"event": "timeout" | "error", "index": k | null, "detail": str}`` (then exit)
* ``{"event": "done"}``
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import quickjs

from .base import js_source
from .linker import REGISTRY, LinkError, link

# Reads back a settled module-evaluation promise as ASCII JSON (the bridge cuts at NUL and
# rejects lone surrogates, so even error messages travel escaped).
_PRELUDE = """
globalThis.__extparity_linked = Object.create(null);
globalThis.__extparity_ascii = function (v) {
  return JSON.stringify(v).replace(/[\\u007f-\\uffff]/g, function (ch) {
    return "\\\\u" + ("0000" + ch.charCodeAt(0).toString(16)).slice(-4);
  });
};
"""


def _emit(**event: object) -> None:
    sys.stdout.write(json.dumps(event, ensure_ascii=True) + "\n")
    sys.stdout.flush()


def _is_interrupt(exc: BaseException) -> bool:
    return "InternalError: interrupted" in str(exc)


def _eval_module(ctx: quickjs.Context, path: str, source: str) -> None:
    """Evaluate one linked module and surface a throw at its top level as LinkError."""
    try:
        promise = ctx.module(source)
    except quickjs.JSException as exc:  # a syntax error; QuickJS only says "<input>:line:col"
        if _is_interrupt(exc):
            raise
        raise LinkError(f"{path}: {exc}") from None
    ctx.set("__extparity_p", promise)
    ctx.eval("globalThis.__extparity_st = null;"
             "__extparity_p.then(function () { __extparity_st = 'ok'; },"
             " function (e) { __extparity_st = String(e) + '\\n' + ((e && e.stack) || ''); });")
    while ctx.execute_pending_job():
        pass
    state = json.loads(ctx.eval("__extparity_ascii(__extparity_st)"))
    if state != "ok":
        raise LinkError(f"{path}: module evaluation failed (lines as on disk): {state}")


def main() -> int:
    job = json.loads(sys.stdin.read())
    t0 = time.perf_counter()
    ctx = quickjs.Context()
    ctx.set_memory_limit(int(job["memory_limit"]))
    if job.get("stack_size"):
        ctx.set_max_stack_size(int(job["stack_size"]))
    ctx.set_time_limit(float(job["startup_budget_s"]))
    try:
        ctx.eval(_PRELUDE)
        modules = link(Path(job["tree"]), job["modules"])
        _emit(event="hashes", hashes={m.path: m.sha256 for m in modules})
        for module in modules:
            _eval_module(ctx, module.path, module.source)
        entries = ", ".join(
            f"{json.dumps(fn)}: {REGISTRY}[{json.dumps(e['module'])}][{json.dumps(e['export'])}]"
            for fn, e in job["entries"].items()
        )
        ctx.eval(f"globalThis.__extparity_entries = {{ {entries} }};\n"
                 f"globalThis.__extparity_runBatch = {js_source('batch-runner.js')};")
    except (LinkError, OSError, quickjs.JSException) as exc:
        kind = "timeout" if _is_interrupt(exc) else "error"
        _emit(event=kind, index=None, detail=f"start-up: {exc}")
        return 0
    _emit(event="ready", link_s=time.perf_counter() - t0, at=time.time())

    deadline = time.perf_counter() + float(job["budget_s"])
    for index, cases_json in enumerate(job["chunks"]):
        remaining = deadline - time.perf_counter()
        if remaining <= 0:
            _emit(event="timeout", index=index, detail=f"budget spent before chunk {index}")
            return 0
        ctx.set_time_limit(remaining)
        started = time.perf_counter()
        try:
            # json.dumps of ASCII text is a valid JS string literal.
            result = ctx.eval(f"__extparity_runBatch(__extparity_entries, {json.dumps(cases_json)})")
        except quickjs.JSException as exc:
            kind = "timeout" if _is_interrupt(exc) else "error"
            _emit(event=kind, index=index, detail=f"chunk {index}: {exc}")
            return 0
        _emit(event="chunk", index=index, result=result, seconds=time.perf_counter() - started)
    _emit(event="done")
    return 0


if __name__ == "__main__":
    sys.exit(main())
