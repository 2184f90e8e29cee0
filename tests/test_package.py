"""What a company's review of the package reads first: a licence, a changelog whose newest release
is the package's version, and typing information shipped with it."""

from __future__ import annotations

import re
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
