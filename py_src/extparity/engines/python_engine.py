"""The Python reference, called in process through the adapter named in `[tool.extparity.reference]`.

The adapter is "module:function" per case kind, each returning the canonical verdict text, so
the harness imports nothing from the subject by name. In process means no time limit can be
enforced: the reference is the contract, and a reference that hangs is a bug to fix, not a
result to compare.
"""

from __future__ import annotations

import importlib
import time
from typing import Any, Callable, Mapping, Sequence

from .base import Engine, EngineRun, host_versions, validate_cases


def load_adapter(spec: str) -> Callable:
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise ValueError(f"reference adapter {spec!r} must look like 'module:function'")
    return getattr(importlib.import_module(module_name), attribute)


class PythonEngine(Engine):
    name = "python"

    def __init__(self, reference: Mapping[str, str]):
        self.reference = dict(reference)

    def describe(self) -> dict[str, Any]:
        return {"engine": self.name, "kind": "python", "adapter": self.reference, **host_versions()}

    def run(self, cases: Sequence[Mapping[str, Any]], timeout_s: float) -> EngineRun:
        validate_cases(cases)
        run = EngineRun()
        started = time.perf_counter()
        try:
            adapters = {fn: load_adapter(spec) for fn, spec in self.reference.items()}
        except Exception as error:  # an unloadable adapter is this engine's crash, not the harness's
            return run.fail("crashed", f"cannot load reference adapter: {type(error).__name__}: {error}")
        run.timings["startup_s"] = time.perf_counter() - started
        started = time.perf_counter()
        for case in cases:
            try:
                if case["fn"] == "parse":
                    verdict = adapters["parse"](case["input"], case.get("allowed"))
                else:
                    verdict = adapters["repair"](case["input"])
            except Exception as error:
                run.case_errors[case["id"]] = f"{type(error).__name__}: {error}"
            else:
                run.verdicts[case["id"]] = verdict
        run.timings["cases_s"] = time.perf_counter() - started
        return run
