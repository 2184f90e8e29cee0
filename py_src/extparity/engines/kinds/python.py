"""The Python reference as an engine: ``module:function`` per entry, run in a worker process.

Why a worker, when the reference is plain Python: it is the project's own code, resolved from
the project that holds the config (its ``path`` option goes first on ``sys.path``), never from
whatever ``toolcalls`` the harness itself happens to import; and a reference that hangs on a
case must cost that case a TIMEOUT, not the run. The result records every file of the
reference's package with its SHA-256, so a report says exactly which reference ran.

The worker runs in the harness's interpreter unless the engine names another, ``python =
"path/to/bin/python"`` (a venv of the project's own, relative to the project): then the
reference, its dependencies and their versions are the project's, not the harness's, and
extparity need not be installed there. The harness hands that interpreter its own package by
file location (see ``child._FOREIGN_WORKER``), so the worker and this host import only the
standard library. The versions recorded are those of the interpreter that ran the reference.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import sys
from pathlib import Path
from typing import Any, Callable

from ..base import BRANCH_COVERAGE, EngineStartError, host_versions
from ..child import ChildEngine
from ..worker import Host


class PythonEngine(ChildEngine):
    HOST = f"{__name__}:PythonHost"
    NEEDS_TREE = False
    OPTIONS = {"path": (str, list), "functions": dict, "python": str}
    COVERAGE = BRANCH_COVERAGE
    kind = "python"
    chunk_size = 200
    coverage: dict[str, Any] | None = None  # {"data_file", "source_pkgs"}: coverage.py in the worker (extparity.coverage)

    def _paths(self) -> list[str]:
        path = self.options.get("path", [])
        return [str(self.project.root / p) for p in ([path] if isinstance(path, str) else path)]

    def _functions(self) -> dict[str, str]:
        functions = self.options.get("functions", {})
        missing = [fn for fn in self.project.entries if fn not in functions]
        if missing:
            raise EngineStartError(f"no reference function for entry {', '.join(missing)} "
                                   f"(set functions = {{ {missing[0]} = \"module:function\" }})")
        return {fn: functions[fn] for fn in self.project.entries}

    def interpreter(self) -> str | None:
        configured = self.options.get("python")
        if configured is None:
            return None
        path = self.project.root / configured
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise EngineStartError(f"[tool.extparity.engines.{self.name}].python: {configured} is not an "
                                   f"executable file (a venv's bin/python, relative to the project)")
        return str(path)

    def describe(self) -> dict[str, Any]:
        # host_versions() is the harness's interpreter until the worker has said which one it is.
        chosen = {"interpreter": self.options["python"]} if "python" in self.options else {}
        return {"engine": self.name, "kind": self.kind, **chosen,
                "path": [self.project.relative(p) for p in self._paths()],
                "functions": dict(self.options.get("functions", {})), **host_versions(), **self.worker_info}

    def job(self) -> dict[str, Any]:
        return {"path": self._paths(), "functions": self._functions(), "coverage": self.coverage}

    def in_process_host(self) -> "PythonHost":
        """The reference loaded here as the worker loads it: from the configured path, refusing a
        package found elsewhere."""
        return PythonHost(self.job())


class PythonHost(Host):
    """Child side: import the functions from the configured path and call them per case."""

    def __init__(self, job: dict[str, Any]) -> None:
        self.coverage = _start_coverage(job.get("coverage"))  # before the reference is imported
        for path in reversed(job["path"]):
            sys.path.insert(0, path)
        self.functions: dict[str, Callable] = {}
        files: dict[Path, Path] = {}  # file -> the sys.path folder it was found under
        for fn, spec in job["functions"].items():
            module_name, _, attribute = spec.partition(":")
            if not module_name or not attribute:
                raise EngineStartError(f"reference function {spec!r} must look like 'module:function'")
            try:
                module = importlib.import_module(module_name)
                self.functions[fn] = getattr(module, attribute)
            except Exception as exc:  # the reference itself fails to import: its crash, reported once
                raise EngineStartError(f"cannot load reference {spec}: {type(exc).__name__}: {exc}") from None
            if module.__file__ is None:  # a namespace package: no file of its own to hash or place
                raise EngineStartError(f"{module_name} is a namespace package; name a module or a package with __init__.py")
            origin = Path(module.__file__).resolve()
            if job["path"] and not any(origin.is_relative_to(Path(p).resolve()) for p in job["path"]):
                raise EngineStartError(f"{module_name} resolved to {origin}, outside the configured path "
                                       f"{', '.join(job['path'])}; refusing to run a different reference")
            top = origin.parent if origin.name == "__init__.py" else origin
            for _ in range(module_name.count(".")):
                top = top.parent  # up to the top-level package: every file it holds is the reference
            for path in (sorted(top.rglob("*.py")) if top.is_dir() else [top]):
                files[path] = top.parent
        # Shown relative to the folder the package was found in: "toolcalls/parser.py".
        self.hashes = {path.relative_to(base).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
                       for path, base in sorted(files.items())}
        self.info: dict[str, Any] = host_versions()  # this worker's interpreter: the one that ran the reference

    def run_cases(self, cases_json: str, case_timeout_s: float):
        """One line per case, as every host answers, without encoding each case again to decode it."""
        for case in json.loads(cases_json):
            yield json.dumps({case["id"]: self._result(case)}, ensure_ascii=True)

    def run_case(self, case_json: str) -> str:
        (case,) = json.loads(case_json)
        return json.dumps({case["id"]: self._result(case)}, ensure_ascii=True)

    def _result(self, case: dict) -> dict[str, str]:
        try:
            verdict = self.functions[case["fn"]](*case["args"])
            if not isinstance(verdict, str):
                raise TypeError(f"reference for {case['fn']} returned {type(verdict).__name__}, not a string: "
                                f"name a function that returns the verdict text (one that serialises what "
                                f"the parser returns, as a JS entry's adapter does)")
            return {"verdict": verdict}
        except Exception as exc:
            return {"error": f"{type(exc).__name__}: {exc}"}

    def close(self) -> None:
        if self.coverage is not None:
            self.coverage.stop()
            self.coverage.save()


def _start_coverage(job: dict[str, Any] | None):
    """coverage.py's branch coverage of the packages ``job["source_pkgs"]`` names, one data file
    per worker (``data_suffix``): a restarted session adds a file, and the parent combines them."""
    if not job:
        return None
    import coverage

    measured = coverage.Coverage(data_file=job["data_file"], data_suffix=True, branch=True,
                                 source_pkgs=job["source_pkgs"],
                                 config_file=False)
    measured.start()
    return measured
