"""One browser per tree (issue 26, part 1): the page engine and its message-path twin share one
browser launch, and nothing of the result may show it.

What is checked, in real Chromium and Firefox: both engines of a tree ran in the same launch
(their sessions' timings name it); the JSON result of a run with shared browsers is byte for
byte the one of the same engines run one at a time, each in a browser of its own; and a case
that hangs in a shared browser is still named, in both engines, with every other case's verdict
kept and no case of the other engine blamed (both then go on in browsers of their own).
"""

from __future__ import annotations

import json

import pytest

from extparity import api
from extparity.engines.driver import run_engine
from extparity.project.config import load_project
from extparity.project.kinds import build_engine
from extparity.results import build
from extparity.run.parity import judged_run

from support import ROOT
from support.fake_extension import make_tree, write_project

pytestmark = pytest.mark.browser

BROWSERS = ["chromium", "firefox", "chromium-background", "firefox-background"]


def launches(run) -> list[int]:
    return run.timings.get("browser_launches", [])


def test_a_shared_browser_gives_the_json_bytes_of_the_engines_run_one_at_a_time():
    project = load_project(ROOT / "pyproject.toml")
    shared = api.run(project, engines=["python", *BROWSERS])
    runs = shared.result.runs
    assert all(run.status == "ok" for run in runs.values()), {n: r.detail for n, r in runs.items()}
    assert launches(runs["chromium"]) == launches(runs["chromium-background"]) != []
    assert launches(runs["firefox"]) == launches(runs["firefox-background"]) != []
    assert launches(runs["chromium"]) != launches(runs["firefox"])

    cases = shared.corpus.cases
    alone = {}
    for name in ["python", *BROWSERS]:  # each engine alone: a browser of its own per engine
        wire = [case.wire(project.entries[case.fn]) for case in cases]
        alone[name] = run_engine(build_engine(project.engines[name], project), wire)
    assert len({tuple(launches(alone[name])) for name in BROWSERS}) == len(BROWSERS)
    one_at_a_time = judged_run(project, cases, alone, {case.id for case in cases})
    document = build.json_result(one_at_a_time, project, shared.corpus.files, [], shared.corpus.tags)
    assert api.result_bytes(shared.document) == api.result_bytes(document)


# The background answers LOOP itself: only the page engines hang on it, and while they do they
# hold up the browser their message-path twins share with them (one renderer in Chromium, the
# background document in Firefox), whose case then breaks through no fault of its own.
BACKGROUND = """\
import { parseToolCallsCanonical } from "./src/agent/tool-call-parser.js";
const api = globalThis.browser ?? globalThis.chrome;
api.runtime.onMessage.addListener((message, sender, respond) => {
  respond({ verdict: message.text === "LOOP" ? "answered" : parseToolCallsCanonical(message.text, message.allowed) });
});
"""
ADAPTER = """\
export default async function (send, modules, text, allowed) {
  return (await send({ text, allowed })).verdict;
}
"""
HANGS = 20


def test_a_case_that_hangs_one_engine_of_a_shared_browser_is_named_and_blames_no_case_of_the_other(tmp_path):
    """One case per call (chunk_size 1), so that a case broken by the other engine's hang would
    be blamed if the break were taken as this engine's own."""
    trees = {flavor: make_tree(tmp_path / flavor, flavor, {"background.js": BACKGROUND})
             for flavor in ("chrome", "firefox")}
    (tmp_path / "adapters").mkdir()
    (tmp_path / "adapters" / "parse.js").write_text(ADAPTER)
    (tmp_path / "adapters" / "repair.js").write_text(ADAPTER)
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "tags.json").write_text(json.dumps({"t": "a test case"}))
    texts = [f"text {i}" for i in range(200)]
    texts[HANGS] = "LOOP"
    (corpus / "cases.jsonl").write_text("".join(
        json.dumps({"id": f"c{i:03d}", "fn": "parse", "input": text, "allowed": [], "expect": "reference",
                    "tags": ["t"], "why": "test_shared_browser"}) + "\n" for i, text in enumerate(texts)))
    engines = {"chromium": {"kind": "chromium", "tree": "chrome", "chunk_size": 1},
               "firefox": {"kind": "firefox", "tree": "firefox", "chunk_size": 1}}
    project = write_project(tmp_path, trees, engines,
                            gate={"messages": {"parse": "adapters/parse.js", "repair": "adapters/repair.js"}})
    runs = api.run(project, case_timeout_s=3).result.runs
    assert list(runs) == BROWSERS
    for name, engine_run in runs.items():
        assert engine_run.status == "ok", (name, engine_run.detail)
        hangs = name in ("chromium", "firefox")
        assert sorted(engine_run.failures) == (["c020"] if hangs else []), (name, engine_run.failures)
        assert len(engine_run.verdicts) == len(texts) - hangs
        if hangs:
            assert engine_run.failures["c020"].kind == "timeout"
        # the first launch was shared; after the hang, each engine went on in a browser of its own
        first, *later = launches(engine_run)
        assert later and first not in later, (name, launches(engine_run))
    assert launches(runs["chromium"])[0] == launches(runs["chromium-background"])[0]
    assert launches(runs["firefox"])[0] == launches(runs["firefox-background"])[0]
