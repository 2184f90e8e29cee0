"""An engine kind of a user's own, named in a config as ``custom_kind:EchoKind``.

It runs the fake extension's subject (``support.fake_extension.PARSER``/``REPAIR``) re-implemented
in Python, in a worker process as the built-in headless kinds do, so its verdicts can be compared
with QuickJS's on the same tree. Nothing here is known to the harness: the kind's class says
where it runs and which host the worker loads, as the built-in kinds' classes do
(``extparity.project.kinds``).

It stays at the top of tests/, not in tests/support/: a config names it by module
(``custom_kind:EchoKind``), as a user names a kind of their own, and the worker process imports it
from PYTHONPATH=tests; test_custom_kind checks that very name in the run's result.
"""

from __future__ import annotations

import json
import os
from typing import Any

from extparity.engines.base import host_versions
from extparity.engines.child import ChildEngine
from extparity.engines.worker import Host


class EchoKind(ChildEngine):
    kind = "echo"
    HOST = "custom_kind:EchoHost"
    NEEDS_TREE = False
    OPTIONS = {"pid_file": str}  # where the worker writes its process id, so a test can see it ran there

    def describe(self) -> dict[str, Any]:
        return {"engine": self.name, "kind": self.kind, **host_versions()}

    def job(self) -> dict[str, Any]:
        return {"pid_file": self.options.get("pid_file")}


class EchoHost(Host):
    """Worker side: the fake subject's two entries, as the JS modules compute them."""

    def __init__(self, job: dict[str, Any]) -> None:
        self.hashes: dict[str, str] = {}
        self.info: dict[str, Any] = {}
        if job["pid_file"]:
            with open(job["pid_file"], "w", encoding="ascii") as out:
                out.write(str(os.getpid()))

    def run_case(self, case_json: str) -> str:
        (case,) = json.loads(case_json)
        if case["fn"] == "parse":  # canon({ calls: [], echo: text }) is JSON.stringify
            verdict = json.dumps({"calls": [], "echo": case["args"][0]}, separators=(",", ":"), ensure_ascii=False)
        else:  # canon(raw.length)
            verdict = str(len(case["args"][0].encode("utf-16-le")) // 2)
        return json.dumps({case["id"]: {"verdict": verdict}}, ensure_ascii=True)


class HostlessKind(EchoKind):
    """A worker kind that forgot to say which host its worker loads."""

    HOST = None


class NotAKind:
    """A class that says nothing of what it is: no engine kind."""
