"""What a company's review of the package reads first: a licence, a changelog whose newest release
is the package's version, one version everywhere, and typing information shipped with it."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib

from support import ROOT


def test_the_version_is_the_newest_release_of_the_changelog():
    version = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
    releases = re.findall(r"^## \[?(\d+\.\d+\.\d+)\]? - \d{4}-\d\d-\d\d$", (ROOT / "CHANGELOG.md").read_text(encoding="utf-8"), re.M)
    assert releases and releases[0] == version, (releases[:1], version)


def test_the_licence_is_apache_2_in_the_file_and_the_metadata():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["license"] == "Apache-2.0" and project["license-files"] == ["LICENSE"]
    assert "Apache License" in (ROOT / "LICENSE").read_text(encoding="utf-8").split("\n", 3)[1]


def test_the_package_declares_its_types():
    assert (ROOT / "py_src" / "extparity" / "py.typed").is_file()


def _pyproject_version() -> str:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]


def test_the_command_and_every_result_state_the_pyprojects_version():
    version = subprocess.run([sys.executable, "-m", "extparity.cli", "--version"], capture_output=True, text=True,
                             env={**os.environ, "PYTHONPATH": str(ROOT / "py_src")}, check=True).stdout
    assert version.strip() == f"extparity {_pyproject_version()}"
    from extparity.results import build
    assert build.__version__ == _pyproject_version()


def test_a_checkout_reads_its_own_pyproject_not_the_installed_metadata(tmp_path):
    """An editable install's metadata keeps the version it was installed with: a checkout whose
    pyproject moved on must say the new one (here 9.8.7, which no installed metadata holds)."""
    shutil.copytree(ROOT / "py_src" / "extparity", tmp_path / "py_src" / "extparity",
                    ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "extparity"\nversion = "9.8.7"\n')
    probe = [sys.executable, "-c", "import extparity; print(extparity.__version__)"]
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "py_src")}
    assert subprocess.run(probe, env=env, cwd=tmp_path, capture_output=True, text=True,
                          check=True).stdout.strip() == "9.8.7"
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "another-package"\nversion = "9.8.7"\n')
    installed = subprocess.run(probe, env=env, cwd=tmp_path, capture_output=True, text=True, check=True).stdout.strip()
    assert installed != "9.8.7" and installed  # not another project's pyproject: the metadata's, or 0+unknown
