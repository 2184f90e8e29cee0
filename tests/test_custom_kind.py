"""A kind of the user's own (``package.module:Class`` in the config) runs as the built-in ones
do: validated by the kind registry, in a worker process the registry tells which host to load,
its verdicts judged against the others'."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from extparity.project.errors import ConfigError

from support.fake_extension import make_tree, write_project

TESTS = Path(__file__).resolve().parent
TEXTS = ["plain", "two words", "{\"name\": \"click\"}", "caf\u00e9 \U0001d11e"]


def corpus(root: Path) -> None:
    (root / "corpus").mkdir()
    (root / "corpus" / "tags.json").write_text('{"t": "test"}')
    lines = [{"id": f"parse-{i}", "fn": "parse", "input": text, "allowed": [], "expect": "reference", "tags": ["t"],
              "why": "w"} for i, text in enumerate(TEXTS)]
    lines += [{"id": f"repair-{i}", "fn": "repair", "input": text, "expect": "reference", "tags": ["t"], "why": "w"}
              for i, text in enumerate(TEXTS)]
    (root / "corpus" / "c.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))


def test_a_custom_kind_from_a_test_module_runs_in_a_worker_and_gives_verdicts(tmp_path):
    tree = make_tree(tmp_path / "chrome", "chrome")
    corpus(tmp_path)
    pid_file = tmp_path / "worker.pid"
    project = write_project(tmp_path, {"chrome": tree}, {
        "quickjs-chrome": {"kind": "quickjs", "tree": "chrome"},
        "echo": {"kind": "custom_kind:EchoKind", "pid_file": str(pid_file)},
    })
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(TESTS), os.environ.get("PYTHONPATH")]))}
    harness = subprocess.Popen([sys.executable, "-m", "extparity.cli", "--config", str(project.path), "run",
                                "--json", str(tmp_path / "r.json")], env=env, text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = harness.communicate(timeout=120)
    assert harness.returncode == 0, out + err
    result = json.loads((tmp_path / "r.json").read_text())
    assert result["engines"]["echo"]["status"] == "ok"
    assert result["engines"]["echo"]["kind"] == "custom_kind:EchoKind"
    assert [case["cells"]["echo"] for case in result["cases"]] == ["pass"] * 2 * len(TEXTS)
    assert all("without_verdict" not in case and "divergent" not in case for case in result["cases"])
    assert json.loads(result["cases"][0]["verdict"]) == {"calls": [], "echo": "plain"}
    worker = int(pid_file.read_text())
    assert worker not in (harness.pid, os.getpid())  # the host ran in a process of its own


def test_a_custom_worker_kind_without_a_host_is_a_config_error_naming_it(tmp_path):
    tree = make_tree(tmp_path / "chrome", "chrome")
    with pytest.raises(ConfigError, match=r"kind custom_kind:HostlessKind: RUNS = 'worker' needs HOST"):
        write_project(tmp_path, {"chrome": tree}, {"e": {"kind": "custom_kind:HostlessKind"}})


def test_a_custom_kind_that_cannot_be_imported_is_a_config_error_naming_the_engine(tmp_path):
    tree = make_tree(tmp_path / "chrome", "chrome")
    with pytest.raises(ConfigError, match=r"\[tool.extparity.engines.e\].kind: cannot import 'no_such_module:Kind'"):
        write_project(tmp_path, {"chrome": tree}, {"e": {"kind": "no_such_module:Kind"}})


def test_a_class_that_is_no_engine_kind_is_a_config_error_naming_what_it_lacks(tmp_path):
    tree = make_tree(tmp_path / "chrome", "chrome")
    with pytest.raises(ConfigError, match=r"kind custom_kind:NotAKind: NotAKind is not an engine kind "
                                          r"\(no RUNS, HOST, EXTENSION, .*\): subclass extparity.engines.base.Engine"):
        write_project(tmp_path, {"chrome": tree}, {"e": {"kind": "custom_kind:NotAKind"}})
