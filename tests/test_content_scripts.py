"""The message path from a content script: where an extension declares content scripts, each
browser's message-path engine gets a twin (``chromium-content``, ``firefox-content``) that sends
every case from a content script of the extension in a web page's tab, so a background that
answers content scripts (a sender whose ``url`` is the web page's) otherwise than its own pages
is a divergence the gate fails on. (``sender.tab`` tells nothing apart: the extension's own page
in a tab has one too.)

Each test is a throwaway copy of the project (``support.gate_copy.Copy``) given one narrow content script.
"""

from __future__ import annotations

import pytest

from support.gate_copy import Copy

pytestmark = [pytest.mark.gate, pytest.mark.browser]

CONTENT_SCRIPT = "// The copy's content script: it only has to run for its tab to get the extension's world.\n"
MATCHES = "https://shop.example/*"
ALL_TOOLS = '["click", "navigate", "read_page", "run_script"]'


def with_content_script(tmp_path) -> Copy:
    copy = Copy(tmp_path)
    copy.write("content.js", CONTENT_SCRIPT)
    for tree in ("chrome", "firefox"):
        copy.edit_json(copy.tree(tree) / "manifest.json",
                       lambda m: m.__setitem__("content_scripts", [{"matches": [MATCHES], "js": ["content.js"]}]))
    copy.reconfigure(lambda table: table["gate"]["glue_scripts"].append(
        {"script": "content.js", "reason": "written by test_content_scripts; it sends nothing"}))
    copy.acknowledge_shipped()
    return copy


def test_the_cases_also_go_from_a_content_script_and_agree(tmp_path):
    copy = with_content_script(tmp_path)
    outcome = copy.gate()
    assert outcome.code == 0, outcome.out + outcome.err
    line = outcome.reason("entry points")
    assert ("content scripts: chrome from a tab by chromium-content; firefox from a tab by firefox-content"
            in line), line
    for engine in ("chromium-content", "firefox-content"):
        assert engine in outcome.json["engines"], list(outcome.json["engines"])
        cells = {r["id"]: r["cells"][engine] for r in outcome.json["cases"]}
        assert cells and set(cells.values()) == {"pass"}, (engine, cells)
    assert not any("divergent" in r for r in outcome.json["cases"])


def trusting_content_scripts(copy: Copy, condition: str) -> None:
    """The copy's background lets every tool run for a content script's parse requests where
    ``condition`` (JS) also holds."""
    copy.edit("background.js", "  sendResponse(answer(message));",
              "  sendResponse(answer(/^https?:/.test(_sender.url ?? \"\") && " + condition + " && "
              "message?.type === \"parseToolCalls\" ? { ...message, allowed: " + ALL_TOOLS + " } : message));")


# (the JS condition under which the background trusts a content script more, the engines that must diverge).
# The Firefox-only one passed the gate before Firefox had a content path: only Chromium sent from a tab.
TRUSTING = {
    "in-both-browsers": ("true", {"chromium-content", "firefox-content"}),
    "only-in-firefox": ('navigator.userAgent.includes("Firefox")', {"firefox-content"}),
}


@pytest.mark.parametrize("where", TRUSTING)
def test_a_background_that_trusts_content_scripts_more_fails_parity_in_the_content_engines_alone(tmp_path, where):
    condition, expected = TRUSTING[where]
    copy = with_content_script(tmp_path)
    trusting_content_scripts(copy, condition)
    outcome = copy.gate(only="parity")
    assert outcome.code == 1, outcome.out + outcome.err
    assert "parity" in outcome.failing(), outcome.out
    diverging = {name for r in outcome.json["cases"] for name in r.get("divergent", {})}
    assert diverging == expected, diverging
