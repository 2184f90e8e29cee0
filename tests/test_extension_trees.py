"""The Chrome and Firefox extension trees stay identical, valid for their browser, and on one version.

The first three tests check the real trees. The rest copy the trees to a temporary folder, break
one thing, and assert that the matching check reports it: a check that cannot fail proves nothing.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXTENSION = ROOT / "extension"

try:
    from extparity import tree_checks
except ImportError:  # running from a checkout without `pip install -e .`
    sys.path.insert(0, str(ROOT / "py_src"))
    from extparity import tree_checks

# Files besides manifest.json that may differ between the trees. Empty on purpose:
# background.js picks `browser` or `chrome` at run time, so it is identical too.
BROWSER_GLUE: frozenset[str] = frozenset()


def test_trees_are_identical_except_manifests():
    assert tree_checks.check_identical_trees(EXTENSION, BROWSER_GLUE) == []


def test_manifests_are_valid_for_their_browser():
    assert tree_checks.check_manifests(EXTENSION) == []


def test_one_version_everywhere():
    assert tree_checks.check_versions(EXTENSION) == []
    assert len(set(tree_checks.declared_versions(EXTENSION).values())) == 1


# --- each check fails on a mutated copy ---------------------------------------------------


@pytest.fixture
def ext(tmp_path: Path) -> Path:
    """A throwaway copy of extension/ that a test may break; it must start out clean."""
    copy = tmp_path / "extension"
    shutil.copytree(EXTENSION, copy)
    if problems := tree_checks.check_all(copy, BROWSER_GLUE):
        # The three real-tree tests above already fail on these; twenty copies add only noise.
        pytest.skip(f"extension/ itself fails the checks: {problems}")
    return copy


def edit_json(path: Path, change) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")


def test_flipped_byte_is_reported(ext: Path):
    target = ext / "firefox" / "inspector.js"
    data = bytearray(target.read_bytes())
    data[100] ^= 0x01
    target.write_bytes(bytes(data))
    assert tree_checks.check_identical_trees(ext, BROWSER_GLUE) == [
        "inspector.js: differs between chrome/ and firefox/ (first at byte 100)"
    ]


def test_file_in_one_tree_only_is_reported(ext: Path):
    (ext / "chrome" / "inspector.css").unlink()
    (ext / "firefox" / "src" / "agent").mkdir(parents=True, exist_ok=True)
    (ext / "firefox" / "src" / "agent" / "extra.js").write_text("export {};\n")
    assert tree_checks.check_identical_trees(ext, BROWSER_GLUE) == [
        "inspector.css: only in firefox/",
        "src/agent/extra.js: only in firefox/",
    ]


def test_listed_glue_may_differ(ext: Path):
    (ext / "chrome" / "background.js").write_text("// chrome-only glue\n")
    assert tree_checks.check_identical_trees(ext, {"background.js"}) == []
    assert tree_checks.check_identical_trees(ext, BROWSER_GLUE) != []


@pytest.mark.parametrize(
    ("browser", "change", "expected"),
    [
        ("chrome", lambda m: m.update(manifest_version=2), "chrome/manifest.json: manifest_version is 2, not 3"),
        ("chrome", lambda m: m["background"].update(scripts=["background.js"]), "background.scripts is present"),
        ("chrome", lambda m: m["background"].pop("service_worker"), "background.service_worker is missing"),
        ("chrome", lambda m: m["background"].pop("type"), 'background.type is not "module"'),
        ("firefox", lambda m: m["background"].pop("scripts"), "background.scripts is missing"),
        ("firefox", lambda m: m["background"].update(service_worker="background.js"), "service_worker is present"),
        ("firefox", lambda m: m.pop("browser_specific_settings"), "gecko.id is missing"),
        ("firefox", lambda m: m["action"].update(default_popup="popup.html"), "references 'popup.html'"),
        ("chrome", lambda m: m.update(icons={"48": "icons/48.png"}), "references 'icons/48.png'"),
        ("chrome", lambda m: m["background"].update(service_worker="../x.js"), "points outside the tree"),
    ],
)
def test_bad_manifest_is_reported(ext: Path, browser, change, expected):
    edit_json(ext / browser / "manifest.json", change)
    problems = tree_checks.check_manifests(ext)
    assert any(expected in p and p.startswith(f"{browser}/") for p in problems), problems


def test_unparsable_manifest_is_reported(ext: Path):
    (ext / "firefox" / "manifest.json").write_text("{", encoding="utf-8")
    assert tree_checks.check_manifests(ext)[0].startswith("firefox/manifest.json: not valid JSON")


def test_missing_referenced_file_is_reported(ext: Path):
    for browser in tree_checks.BROWSERS:
        (ext / browser / "background.js").unlink()
    problems = tree_checks.check_manifests(ext)
    assert problems == [
        "chrome/manifest.json: references 'background.js', which does not exist",
        "firefox/manifest.json: references 'background.js', which does not exist",
    ]


@pytest.mark.parametrize("source", ["chrome/manifest.json", "firefox/manifest.json", "package.json"])
def test_version_mismatch_is_reported(ext: Path, source):
    edit_json(ext / source, lambda data: data.update(version="9.9.9"))
    problems = tree_checks.check_versions(ext)
    assert len(problems) == 1 and problems[0].startswith("versions disagree:")
    assert f"{source}=9.9.9" in problems[0]


def test_newest_changelog_heading_is_the_one_compared(ext: Path):
    changelog = ext / "CHANGELOG.md"
    text = changelog.read_text(encoding="utf-8")
    first = text.index("\n## ")
    changelog.write_text(text[:first] + "\n## [9.9.9] - 2027-01-01\n\n- Later.\n" + text[first:], encoding="utf-8")
    problems = tree_checks.check_versions(ext)
    assert len(problems) == 1 and "CHANGELOG.md=9.9.9" in problems[0]


def test_missing_version_is_reported(ext: Path):
    (ext / "package.json").unlink()
    assert "package.json: no version found" in tree_checks.check_versions(ext)
