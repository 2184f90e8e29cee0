"""The Chrome and Firefox extension trees stay identical, valid for their browser, and on one version.

The first three tests check the real trees with the same generic checks `extparity gate` runs
(trees by name, browser rules by the engine kind that loads each tree). The rest copy the trees
to a temporary folder, break one thing, and assert that the matching check reports it: a check
that cannot fail proves nothing.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from support import ROOT
from support.copies import copy_folders

EXTENSION = ROOT / "extension"

try:
    from extparity.subject import release
    from extparity.subject import tree_checks
except ImportError:  # running from a checkout without `pip install -e .`
    sys.path.insert(0, str(ROOT / "py_src"))
    from extparity.subject import release
    from extparity.subject import tree_checks

BROWSERS = ("chrome", "firefox")
LOADED_BY = {"chrome": ["chromium"], "firefox": ["firefox"]}  # tree -> engine kinds, as the config binds them
# Files besides manifest.json that may differ between the trees. Empty on purpose:
# background.js picks `browser` or `chrome` at run time, so it is identical too.
BROWSER_GLUE: frozenset[str] = frozenset()


def trees(ext: Path) -> dict[str, Path]:
    return {browser: ext / browser for browser in BROWSERS}


def versions(ext: Path) -> dict[str, str | None]:
    return release.declared_versions({"chrome/manifest.json": ext / "chrome" / "manifest.json",
                                      "firefox/manifest.json": ext / "firefox" / "manifest.json",
                                      "package.json": ext / "package.json", "CHANGELOG.md": ext / "CHANGELOG.md"})


def check_all(ext: Path) -> list[str]:
    return (tree_checks.compare_trees(trees(ext), BROWSER_GLUE) + tree_checks.check_manifests(trees(ext), LOADED_BY)
            + release.check_versions(versions(ext)))


def test_trees_are_identical_except_manifests():
    assert tree_checks.compare_trees(trees(EXTENSION), BROWSER_GLUE) == []


def test_manifests_are_valid_for_their_browser():
    assert tree_checks.check_manifests(trees(EXTENSION), LOADED_BY) == []


def test_one_version_everywhere():
    assert release.check_versions(versions(EXTENSION)) == []
    assert len(set(versions(EXTENSION).values())) == 1


# --- each check fails on a mutated copy ---------------------------------------------------


@pytest.fixture
def ext(tmp_path: Path) -> Path:
    """A throwaway copy of extension/ that a test may break; it must start out clean."""
    copy = copy_folders(tmp_path, "extension") / "extension"
    if problems := check_all(copy):
        # The three real-tree tests above already fail on these; twenty copies add only noise.
        pytest.skip(f"extension/ itself fails the checks: {problems}")
    return copy


def edit_json(path: Path, change) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")


def test_flipped_byte_is_reported_counted_from_1_as_cmp_counts(ext: Path):
    target = ext / "firefox" / "inspector.js"
    data = bytearray(target.read_bytes())
    data[100] ^= 0x01
    target.write_bytes(bytes(data))
    assert tree_checks.compare_trees(trees(ext), BROWSER_GLUE) == [
        "inspector.js: differs between chrome and firefox (first at byte 101)"
    ]
    cmp = subprocess.run(["cmp", ext / "chrome" / "inspector.js", target], capture_output=True, text=True)
    assert re.search(r"differ: (?:char|byte) 101,", cmp.stdout), cmp.stdout


def test_file_in_one_tree_only_is_reported(ext: Path):
    (ext / "chrome" / "inspector.css").unlink()
    (ext / "firefox" / "src" / "agent").mkdir(parents=True, exist_ok=True)
    (ext / "firefox" / "src" / "agent" / "extra.js").write_text("export {};\n")
    assert tree_checks.compare_trees(trees(ext), BROWSER_GLUE) == [
        "inspector.css: only in firefox",
        "src/agent/extra.js: only in firefox",
    ]


def test_listed_glue_may_differ(ext: Path):
    (ext / "chrome" / "background.js").write_text("// chrome-only glue\n")
    assert tree_checks.compare_trees(trees(ext), {"background.js"}) == []
    assert tree_checks.compare_trees(trees(ext), BROWSER_GLUE) != []


def test_any_number_of_trees_by_any_names(ext: Path):
    third = ext / "edge"
    shutil.copytree(ext / "chrome", third)
    (third / "inspector.css").write_text("edge\n")
    assert tree_checks.compare_trees({"chrome": ext / "chrome", "firefox": ext / "firefox", "edge": third}) == [
        "inspector.css: differs between chrome and edge (first at byte 1)"
    ]


@pytest.mark.parametrize(
    ("browser", "change", "expected"),
    [
        ("chrome", lambda m: m.update(manifest_version=2), "chrome/manifest.json: manifest_version is 2, not 3"),
        ("firefox", lambda m: m.update(manifest_version=4), "firefox/manifest.json: manifest_version is 4, not 2 or 3"),
        ("chrome", lambda m: m["background"].update(scripts=["background.js"]), "background.scripts is present"),
        ("chrome", lambda m: m["background"].pop("service_worker"), "background.service_worker is missing"),
        ("chrome", lambda m: m["background"].pop("type"), 'background.type is not "module"'),
        ("firefox", lambda m: m["background"].pop("scripts"), "background.scripts is missing"),
        ("firefox", lambda m: m.pop("browser_specific_settings"), "gecko.id is missing"),
        ("firefox", lambda m: m["action"].update(default_popup="popup.html"), "references 'popup.html'"),
        ("chrome", lambda m: m.update(icons={"48": "icons/48.png"}), "references 'icons/48.png'"),
        ("chrome", lambda m: m["background"].update(service_worker="../x.js"), "points outside the tree"),
    ],
)
def test_bad_manifest_is_reported(ext: Path, browser, change, expected):
    edit_json(ext / browser / "manifest.json", change)
    problems = tree_checks.check_manifests(trees(ext), LOADED_BY)
    assert any(expected in p and p.startswith(f"{browser}/") for p in problems), problems


def test_unparsable_manifest_is_reported(ext: Path):
    (ext / "firefox" / "manifest.json").write_text("{", encoding="utf-8")
    assert tree_checks.check_manifests(trees(ext), LOADED_BY)[0].startswith("firefox/manifest.json: not valid JSON")


@pytest.mark.parametrize(("content", "line"), [
    (None, "chrome/manifest.json: missing"),
    ("{", "chrome/manifest.json: not valid JSON (Expecting property name"),
    ("[]", "chrome/manifest.json: top level is not an object"),
    ("a folder", "chrome/manifest.json: cannot read it (Is a directory)"),
])
def test_the_one_manifest_reader_says_what_is_wrong_in_one_line_to_every_reader(tmp_path, content, line):
    """The config (content-script twins), the engines (Firefox's packed add-on, Chromium's
    service worker, the content page) and the checks read manifests through one function."""
    from extparity.engines.base import EngineStartError
    from extparity.engines.kinds.firefox import pack_xpi
    from extparity.project.config import declares_content_scripts

    tree = tmp_path / "chrome"
    tree.mkdir()
    if content == "a folder":
        (tree / "manifest.json").mkdir()
    elif content is not None:
        (tree / "manifest.json").write_text(content, encoding="utf-8")
    manifest, error = tree_checks.load_manifest("chrome", tree)
    assert manifest is None and error.startswith(line) and "\n" not in error, error
    assert declares_content_scripts(tree) is False
    with pytest.raises(EngineStartError) as raised:
        pack_xpi(tree, tmp_path / "packed", None, {})
    assert str(raised.value) == error


def test_missing_referenced_file_is_reported(ext: Path):
    for browser in BROWSERS:
        (ext / browser / "background.js").unlink()
    problems = tree_checks.check_manifests(trees(ext), LOADED_BY)
    assert problems == [
        "chrome/manifest.json: references 'background.js', which does not exist",
        "firefox/manifest.json: references 'background.js', which does not exist",
    ]


@pytest.mark.parametrize("source", ["chrome/manifest.json", "firefox/manifest.json", "package.json"])
def test_version_mismatch_is_reported(ext: Path, source):
    edit_json(ext / source, lambda data: data.update(version="9.9.9"))
    problems = release.check_versions(versions(ext))
    assert len(problems) == 1 and problems[0].startswith("versions disagree:")
    assert f"{source}=9.9.9" in problems[0]


def test_newest_changelog_heading_is_the_one_compared(ext: Path):
    changelog = ext / "CHANGELOG.md"
    text = changelog.read_text(encoding="utf-8")
    first = text.index("\n## ")
    changelog.write_text(text[:first] + "\n## [9.9.9] - 2027-01-01\n\n- Later.\n" + text[first:], encoding="utf-8")
    problems = release.check_versions(versions(ext))
    assert len(problems) == 1 and "CHANGELOG.md=9.9.9" in problems[0]


def test_missing_version_is_reported(ext: Path):
    (ext / "package.json").unlink()
    assert "package.json: no version found" in release.check_versions(versions(ext))


def test_a_page_that_loads_a_missing_script_is_reported(ext: Path):
    page = ext / "chrome" / "inspector.html"
    page.write_text(page.read_text().replace('src="inspector.js"', 'src="gone.js"'))
    assert "chrome/inspector.html: references 'gone.js', which does not exist" in \
        tree_checks.check_manifests(trees(ext), LOADED_BY)


def test_manifests_may_differ_only_in_the_allowed_keys(ext: Path):
    manifests = {b: tree_checks.load_manifest(b, ext / b)[0] for b in BROWSERS}
    assert tree_checks.compare_manifests(manifests, ["background", "browser_specific_settings"]) == []
    assert tree_checks.compare_manifests(manifests, ["background"]) == [
        "manifest.json key 'browser_specific_settings' is only in firefox"]
    shipped = manifests["chrome"]["version"]
    manifests["firefox"]["version"] = "9.9.9"
    assert tree_checks.compare_manifests(manifests, ["background", "browser_specific_settings"]) == [
        f"manifest.json key 'version' differs: chrome=\"{shipped}\", firefox=\"9.9.9\""]


def test_what_each_manifest_reaches_and_what_each_background_loads():
    for browser in BROWSERS:
        manifest, _ = tree_checks.load_manifest(browser, EXTENSION / browser)
        reached, problems = tree_checks.reachable_files(EXTENSION / browser, manifest)
        assert problems == []
        assert reached == ["background.js", "inspector.css", "inspector.html", "inspector.js",
                           "src/agent/argument-repair.js", "src/agent/json-core.js", "src/agent/json-fast.js",
                           "src/agent/tool-call-parser.js"]
        assert sorted(tree_checks.background_closure(EXTENSION / browser, manifest)) == [
            "background.js", "src/agent/argument-repair.js", "src/agent/json-core.js", "src/agent/json-fast.js",
            "src/agent/tool-call-parser.js"]
