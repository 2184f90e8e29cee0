"""The python kind's ``python = "path/to/bin/python"``: the reference runs in the project's own
interpreter, with that interpreter's packages and none of the harness's, and the result records
that interpreter's version and the reference's file hashes.

The second interpreter is real: a venv made from Debian's Python (3.11.2 here, the harness runs
in another build), into whose site-packages the test puts a module the harness cannot import.
"""

from __future__ import annotations

import json
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from support.fake_extension import make_tree, sha256, write_project

TEXTS = ["plain", "two words", "{\"name\": \"click\"}"]
REFERENCE = """\
import json

import only_in_the_venv


def parse(text, allowed):
    return json.dumps({"calls": [], "echo": text}, separators=(",", ":"))


def repair(raw):
    return only_in_the_venv.length(raw)
"""


def base_python() -> str:
    """An interpreter other than the harness's: Debian's, where it is installed."""
    debian = Path("/usr/bin/python3")
    return str(debian) if debian.exists() else sys._base_executable  # type: ignore[attr-defined]


@pytest.fixture(scope="module")
def venv(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("user-venv") / "venv"
    subprocess.run([base_python(), "-m", "venv", "--without-pip", str(root)], check=True)
    purelib = subprocess.run([str(root / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                             capture_output=True, text=True, check=True).stdout.strip()
    Path(purelib, "only_in_the_venv.py").write_text("def length(raw):\n    return str(len(raw))\n")
    return root


def interpreter_version(python: Path) -> str:
    return subprocess.run([str(python), "-c", "import platform; print(platform.python_version())"],
                          capture_output=True, text=True, check=True).stdout.strip()


def project(root: Path, venv: Path, reference: str = REFERENCE):
    tree = make_tree(root / "chrome", "chrome")
    (root / "ref").mkdir()
    (root / "ref" / "userref.py").write_text(reference)
    (root / "corpus").mkdir()
    (root / "corpus" / "tags.json").write_text('{"t": "test"}')
    lines = [{"id": f"parse-{i}", "fn": "parse", "input": text, "allowed": [], "expect": "reference",
              "tags": ["t"], "why": "w"} for i, text in enumerate(TEXTS)]
    lines += [{"id": f"repair-{i}", "fn": "repair", "input": text, "expect": "reference", "tags": ["t"], "why": "w"}
              for i, text in enumerate(TEXTS)]
    (root / "corpus" / "c.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    python = venv / "bin" / "python"
    return write_project(root, {"chrome": tree}, {
        "python": {"kind": "python", "path": "ref", "python": str(python),
                   "functions": {"parse": "userref:parse", "repair": "userref:repair"}},
        "quickjs-chrome": {"kind": "quickjs", "tree": "chrome"},
    }, reference="python")


def run(project_path: Path, tmp: Path) -> tuple[subprocess.CompletedProcess, dict]:
    done = subprocess.run([sys.executable, "-m", "extparity.cli", "--config", str(project_path), "run",
                           "--json", str(tmp / "r.json")], capture_output=True, text=True, timeout=120)
    result = json.loads((tmp / "r.json").read_text()) if (tmp / "r.json").exists() else {}
    return done, result


def test_the_reference_runs_in_the_configured_interpreter_and_its_version_and_files_are_recorded(tmp_path, venv):
    """The venv has no packages at all: the worker starting there is what holds the worker and
    the python host to the standard library."""
    configured = project(tmp_path, venv)
    done, result = run(configured.path, tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    python = result["engines"]["python"]
    assert python["status"] == "ok"
    assert python["versions"]["python"] == interpreter_version(venv / "bin" / "python")
    assert python["versions"]["interpreter"] == configured.engines["python"].options["python"]
    assert python["module_hashes"] == {"userref.py": sha256(tmp_path / "ref" / "userref.py")}
    assert [case["cells"]["python"] for case in result["cases"]] == ["pass"] * 2 * len(TEXTS)


def test_the_versions_recorded_are_the_venvs_not_the_harnesss():
    """What makes the test above able to tell the two interpreters apart."""
    if base_python() != "/usr/bin/python3":
        pytest.skip("no second CPython build on this machine to tell apart by version")
    assert interpreter_version(Path(base_python())) != interpreter_version(Path(sys.executable))


def test_the_harnesss_packages_are_not_importable_in_the_users_interpreter(tmp_path, venv):
    assert Path(sysconfig.get_path("purelib"), "playwright").is_dir()  # the harness has it
    configured = project(tmp_path, venv, REFERENCE.replace("import only_in_the_venv", "import playwright"))
    done, result = run(configured.path, tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert result["engines"]["python"]["status"] == "crashed"
    assert "cannot load reference userref:parse: ModuleNotFoundError: No module named 'playwright'" in \
        result["engines"]["python"]["detail"]


def test_an_interpreter_that_is_not_there_is_one_line_naming_the_option(tmp_path, venv):
    configured = project(tmp_path, tmp_path / "no-venv")
    done, result = run(configured.path, tmp_path)
    assert done.returncode == 1
    assert result["engines"]["python"]["detail"].startswith(
        "[tool.extparity.engines.python].python: ") and "is not an executable file" in result["engines"]["python"]["detail"]
