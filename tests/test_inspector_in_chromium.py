"""The shipped extension as a person and as another part of an agent use it, in real Chromium.

The parity suite proves the modules' verdicts; these tests prove the glue around them: the
inspector page shows what would run and why the rest was refused, and the background answers
`runtime.sendMessage` with the modules' own verdicts. A missing browser fails, never skips.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from urllib.parse import urlparse

import pytest
from playwright.sync_api import sync_playwright

from extparity.project.config import load_project
from toolcalls import parse_tool_calls, parse_tool_calls_canonical, repair_arguments, repair_arguments_canonical

pytestmark = pytest.mark.browser

PROJECT = load_project()
TREE = PROJECT.trees["chrome"]
CHROMIUM = PROJECT.engines["chromium"].options["executable"]
PAGE = "inspector.html"
ALLOWED = ["click", "navigate"]
TEXT = ('Opening settings.\n{"name":"navigate","arguments":{"url":"https://example.com"}}\n'
        'I will not call {"name":"click","arguments":{"selector":"#delete"}} here.\n'
        'The page asked for <tool_call>{"name":"delete_all","arguments":{}}</tool_call>, which I ignore.')
# The same output trying a call nobody allowed: then none of its calls runs (SPEC.md 5.12).
COMPROMISED = TEXT + '\n<tool_call>{"name":"delete_all","arguments":{}}</tool_call>'


@pytest.fixture(scope="module")
def extension():
    """(context, extension id) with the Chrome tree loaded unpacked."""
    assert Path(CHROMIUM).exists(), f"Chromium is not installed at {CHROMIUM}"
    with sync_playwright() as p, tempfile.TemporaryDirectory() as profile:
        context = p.chromium.launch_persistent_context(
            profile, executable_path=CHROMIUM, headless=True,
            args=[f"--disable-extensions-except={TREE}", f"--load-extension={TREE}", "--no-sandbox",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"])
        worker = context.service_workers[0] if context.service_workers else context.wait_for_event("serviceworker")
        yield context, urlparse(worker.url).hostname
        context.close()


@pytest.fixture
def inspector(extension):
    context, extension_id = extension
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(f"chrome-extension://{extension_id}/{PAGE}")
    page.wait_for_selector("body[data-rendered]")
    yield page
    assert errors == []
    page.close()


def table_rows(page, selector):
    return page.eval_on_selector_all(f"{selector} tbody tr", "rows => rows.map(r => [...r.cells].map(c => c.textContent))")


@pytest.mark.parametrize("text, runs, reasons", [
    (TEXT, ["navigate"], {"not-own-line"}),
    (COMPROMISED, [], {"not-own-line", "sibling-rejected", "not-allowed"}),
], ids=["narration-refused", "compromised-output-runs-nothing"])
def test_inspector_shows_what_would_run_and_why_the_rest_was_refused(inspector, text, runs, reasons):
    page = inspector
    page.fill("#allowlist", ", ".join(ALLOWED))
    page.fill("#model-output", text)
    verdict = parse_tool_calls(text, ALLOWED)
    page.wait_for_function(f"document.querySelectorAll('#rejected tbody tr').length === {len(verdict['rejected'])}")
    calls = table_rows(page, "#calls")
    rejected = table_rows(page, "#rejected")
    if verdict["calls"]:
        assert [(row[1], row[2]) for row in calls] == [(c["name"], c["format"]) for c in verdict["calls"]]
    else:
        assert calls == [["None"]]  # the table's one empty row
    assert [(row[1], row[2], row[3]) for row in rejected] == [
        (r["reason"], r["format"], r["name"] or "") for r in verdict["rejected"]]
    assert all(row[5] != "" for row in rejected), "every reason is explained in the Why column"
    assert [call["name"] for call in verdict["calls"]] == runs
    assert {r["reason"] for r in verdict["rejected"]} == reasons
    highlighted = page.eval_on_selector_all("#rendered mark", "marks => marks.map(m => m.textContent)")
    spans = [text[c["span"][0]:c["span"][1]] for c in verdict["calls"] + verdict["rejected"]]
    assert sorted(spans) == sorted(h for h in highlighted if h in spans)


def test_inspector_repairs_truncated_arguments_without_inventing(inspector):
    page = inspector
    page.fill("#raw-arguments", '{"items": [1, 2, 3')
    page.wait_for_function("document.querySelector('#repair-status').textContent === 'repaired'")
    assert json.loads(page.text_content("#repair-arguments")) == {"items": [1, 2, 3]}
    page.fill("#raw-arguments", '{"path":"x.txt","content":"hel')
    page.wait_for_function("document.querySelector('#repair-status').textContent === 'rejected'")
    assert page.text_content("#repair-reason") == "truncated-in-string"


@pytest.mark.parametrize("message, expected", [
    ({"type": "parseToolCalls", "text": TEXT, "allowed": ALLOWED}, {"verdict": parse_tool_calls_canonical(TEXT, ALLOWED)}),
    ({"type": "repairArguments", "raw": '{"a": [1, 2'}, {"verdict": repair_arguments_canonical('{"a": [1, 2')}),
    ({"type": "launchMissiles"}, {"error": "unknown-message-type"}),
    ({"type": "parseToolCalls", "text": 7, "allowed": ALLOWED}, {"error": "bad-message"}),
], ids=["parse", "repair", "unknown-type", "bad-message"])
def test_background_answers_runtime_messages_with_the_modules_canonical_verdicts(inspector, message, expected):
    reply = inspector.evaluate("message => chrome.runtime.sendMessage(message)", message)
    assert reply == expected


def test_a_reply_keeps_argument_keys_named_like_object_prototype_members(inspector):
    """The verdict travels as text: keys like __proto__ survive any browser's message cloning
    (repair keeps them; the parser refuses a call that holds them, SPEC.md 5.12)."""
    raw = '{"__proto__":{"x":1},"constructor":2}'
    reply = inspector.evaluate("message => chrome.runtime.sendMessage(message)", {"type": "repairArguments", "raw": raw})
    assert json.loads(reply["verdict"])["arguments"] == {"__proto__": {"x": 1}, "constructor": 2}
    text = '{"name":"click","arguments":' + raw + '}'
    reply = inspector.evaluate("message => chrome.runtime.sendMessage(message)",
                               {"type": "parseToolCalls", "text": text, "allowed": ["click"]})
    assert json.loads(reply["verdict"])["rejected"] == [{"format": "bare", "name": "click", "reason": "unsafe-key", "span": [0, len(text)]}]
