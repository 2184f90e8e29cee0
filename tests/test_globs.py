"""Glob patterns in the gate's path lists: bundlers hash chunk names (`chunks/popup-v7w0ZTp-.js`),
so a list of literal paths broke at every build. A pattern is matched against each build's files,
the check's line says what it matched, and a pattern that matches nothing is stale and fails."""

from __future__ import annotations

import pytest

from extparity.project.globs import described, expand, matches

from support.gate_copy import Copy, bundled_gate

CHROME_CHUNK, FIREFOX_CHUNK = "chunks/popup-v7w0ZTp-.js", "chunks/popup-Qm3xk1Lr.js"


@pytest.mark.parametrize("pattern, path, expected", [
    ("chunks/popup-*.js", CHROME_CHUNK, True),
    ("chunks/popup-*.js", "chunks/deep/popup-a.js", False),  # `*` stays within a folder
    ("chunks/**/popup-*.js", "chunks/deep/popup-a.js", True),
    ("**/popup-*.js", "popup-a.js", True),  # `**/` is also no folder at all
    ("popup-?.js", "popup-a.js", True),
    ("popup-?.js", "popup-ab.js", False),
    ("popup-[ab].js", "popup-b.js", True),
    ("popup-[!ab].js", "popup-b.js", False),
    ("popup.js", "popup.js", True),  # a literal path is itself, and only itself
    ("popup.js", "popupxjs", False),
])
def test_a_pattern_matches_as_the_shell_does_on_tree_relative_paths(pattern, path, expected):
    assert matches(pattern, path) is expected


def test_what_a_pattern_matched_is_said_and_nothing_is_stale():
    found = expand(["chunks/*.js", "background.js", "gone-*.js"], ["background.js", *(f"chunks/c{i}.js" for i in range(5))])
    assert [described(pattern, paths) for pattern, paths in found.items()] == [
        "chunks/*.js (matched chunks/c0.js, chunks/c1.js, chunks/c2.js and 2 more)", "background.js",
        "gone-*.js (matched nothing)"]


def hashed_chunks(copy: Copy) -> None:
    """Each tree's build names its popup chunk by its content, as WXT and Vite do."""
    copy.write(CHROME_CHUNK, "globalThis.popup = 'chrome build';\n", trees=("chrome",))
    copy.write(FIREFOX_CHUNK, "globalThis.popup = 'firefox build';\n", trees=("firefox",))


@pytest.mark.gate
def test_glue_and_glue_scripts_take_patterns_say_what_they_matched_and_a_stale_one_fails(tmp_path):
    copy = Copy(tmp_path, glue=["chunks/popup-*.js"],
                glue_scripts=bundled_gate("glue_scripts") + [{"script": "chunks/popup-*.js", "reason": "the popup"}])
    hashed_chunks(copy)
    outcome = copy.gate(only="trees,scripts")
    assert outcome.code == 0, outcome.out + outcome.err
    matched = f"chunks/popup-*.js (matched {FIREFOX_CHUNK}, {CHROME_CHUNK})"
    assert outcome.reason("trees").endswith(f"(manifest.json compared key by key; glue: {matched})")
    assert f"declared glue (background.js; inspector.js; {matched})" in outcome.reason("scripts"), outcome.reason("scripts")
    copy.reconfigure(lambda table: table["gate"].update(
        glue=["chunks/popup-*.js", "chunks/options-*.js"],
        glue_scripts=table["gate"]["glue_scripts"] + [{"script": "chunks/options-*.js", "reason": "the options"}]))
    outcome = copy.gate(only="trees,scripts")
    assert outcome.failing() == {"trees", "scripts"}
    assert outcome.problems("trees") == ["glue chunks/options-*.js: matches no file in any tree ([tool.extparity.gate].glue)"]
    assert outcome.problems("scripts") == ["glue script chunks/options-*.js: no tree ships a script it matches: "
                                           "remove it from [tool.extparity.gate].glue_scripts"]


@pytest.mark.gate
def test_without_the_patterns_every_build_breaks_the_lists(tmp_path):
    """The literal paths of one build, against the next: what the patterns above replace."""
    copy = Copy(tmp_path, glue=["chunks/popup-AAAAAAAA.js"])
    hashed_chunks(copy)
    outcome = copy.gate(only="trees")
    assert outcome.problems("trees") == [f"{FIREFOX_CHUNK}: only in firefox", f"{CHROME_CHUNK}: only in chrome",
                                         "glue chunks/popup-AAAAAAAA.js: in no tree ([tool.extparity.gate].glue)"]
