"""`extparity gate --results MERGED.json`: the gate judges merged shard results instead of running
the engines, with the same lines as a live gate, and refuses (one line, exit 1) any result that
is not about this configuration, this corpus and these bytes.

One small copy of the project (support.gate_copy's) runs live once and as two shards once, with
every kind of engine the gate needs (reference, QuickJS, both browsers through their modules and
through their backgrounds); every other scenario edits the merged result or the copy's files and
costs no browser start.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from support.gate_copy import CHECKS, Copy, call_in

# Every test needs the module's project, a live gate and two shards with both browsers.
pytestmark = [pytest.mark.gate, pytest.mark.browser]

ENGINES = ("python", "quickjs-chrome", "chromium", "firefox", "chromium-background", "firefox-background")


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    root = tmp_path_factory.mktemp("gate-results")
    subject = Copy(root, engines=ENGINES)
    live = subject.gate(report="live.json")
    assert live.code == 0, live.out + live.err
    for k in (1, 2):
        code, _, err = call_in(subject, "run", "--shard", f"{k}/2", "--json", str(root / f"shard-{k}.json"),
                               "--coverage", str(root / f"coverage-{k}.json"))
        assert code == 0, err
    code, _, err = call_in(subject, "merge", str(root / "shard-1.json"), str(root / "shard-2.json"),
                           "--json", str(root / "merged.json"))
    assert code == 0, err
    return subject, live


def shard_coverage(subject: Copy) -> list[str]:
    return ["--coverage-from", str(subject.root / "coverage-1.json"), str(subject.root / "coverage-2.json")]


def gate_on(subject: Copy, document: dict, name: str = "edited.json", only: str | None = None):
    path = subject.root / name
    path.write_text(json.dumps(document), encoding="utf-8")
    return subject.gate("--results", str(path), *shard_coverage(subject), report=f"gate-{name}", only=only)


def merged(subject: Copy) -> dict:
    return json.loads((subject.root / "merged.json").read_text(encoding="utf-8"))


def test_the_gate_on_merged_shards_says_what_the_live_gate_says(project):
    subject, live = project
    recorded = subject.gate("--results", str(subject.root / "merged.json"), *shard_coverage(subject), report="recorded.json")
    assert recorded.code == 0, recorded.out + recorded.err
    assert recorded.lines == live.lines and list(recorded.lines) == CHECKS
    assert recorded.json["gate"] == live.json["gate"] and recorded.json["cases"] == live.json["cases"]
    assert recorded.json["modules"] == live.json["modules"]  # the trees' digests included


def refusal(outcome) -> str:
    assert outcome.code == 1 and outcome.json is None, outcome.out + outcome.err
    lines = [line for line in outcome.err.splitlines() if "refused" in line]
    assert len(lines) == 1, outcome.err
    return lines[0].split("refused: ", 1)[1]


def drop_engine(document):
    document["summary"] = [row for row in document["summary"] if row["engine"] != "firefox-background"]
    del document["engines"]["firefox-background"]
    for case in document["cases"]:
        case["cells"].pop("firefox-background")


def drop_case(document):
    document["cases"] = document["cases"][1:]


def move_case(document):
    document["cases"][0]["line"] += 1


def drop_cell(document):
    del document["cases"][2]["cells"]["chromium"]


def other_module_hash(document):
    document["modules"]["on_disk"]["src/agent/json-core.js"]["chrome"] = "0" * 64


def no_tree_digests(document):
    del document["modules"]["trees"]


def other_adapter(document):
    document["modules"]["adapters"]["message:parse"]["sha256"] = "0" * 64


def another_verdict_for_everyone(document):
    case = next(c for c in document["cases"] if c["fn"] == "repair")
    case["verdict"] = json.dumps({"other": True})  # every engine still agrees, but the expectation fails


@pytest.mark.parametrize("edit, words", [
    (drop_engine, "it ran engines python, quickjs-chrome, chromium, firefox, chromium-background; the gate needs "
                  "exactly python, quickjs-chrome, chromium, firefox, chromium-background, firefox-background"),
    (drop_case, "has no result: a shard is missing"),
    (move_case, "its line in the result is not the corpus's"),
    (drop_cell, "no cell for chromium"),
    (other_module_hash, "module src/agent/json-core.js: its hashes in the result are not the artifacts' bytes"),
    (no_tree_digests, "it records no tree digests"),
    (other_adapter, "adapter message:parse: not the bytes on disk (adapters/messages/parse.js)"),
    (another_verdict_for_everyone, "is 'pass' in the result but 'unexpected' judged here"),
])
def test_a_result_from_another_configuration_or_corpus_is_refused_in_one_line(project, edit, words):
    subject, _ = project
    document = merged(subject)
    edit(document)
    assert words in refusal(gate_on(subject, document))


def test_a_result_from_other_tree_bytes_is_refused_even_outside_the_modules(project, tmp_path):
    subject, _ = project
    page = subject.tree("firefox") / "manifest.json"
    before = page.read_bytes()
    try:
        page.write_bytes(before.replace(b'"version"', b'"description": "changed after the shards ran", "version"', 1))
        reason = refusal(subject.gate("--results", str(subject.root / "merged.json"), report="changed.json"))
    finally:
        page.write_bytes(before)
    assert reason.startswith("tree firefox: the engines were given ") and "rerun the shards" in reason


def test_an_accepted_result_with_a_divergence_fails_parity_and_a_silent_background_fails_entry_points(project):
    subject, _ = project
    document = merged(subject)
    case = next(c for c in document["cases"] if c["fn"] == "parse")
    case["divergent"] = {"firefox": json.dumps({"calls": [], "error": None, "rejected": []})}
    case["cells"]["firefox"] = "diverges"
    case.setdefault("notes", {})["firefox"] = ["differs from python"]
    background = document["engines"]["chromium-background"]
    background.update(status="crashed", detail="service worker threw at start-up")
    for other in document["cases"]:
        other["cells"]["chromium-background"] = "missing"
        other.setdefault("without_verdict", []).append("chromium-background")
    outcome = gate_on(subject, document, "failing.json", only="parity,entry points")
    assert outcome.code == 1, outcome.err
    assert {"parity", "entry points"} <= outcome.failing()
    assert "chromium-background: crashed: service worker threw at start-up" in outcome.reason("entry points")
    assert outcome.json["ok"] is False


def test_a_loaded_background_script_that_is_not_the_artifacts_fails_the_background_check(project):
    subject, _ = project
    document = merged(subject)
    document["engines"]["firefox-background"]["module_hashes"]["background.js"] = "1" * 64
    outcome = gate_on(subject, document, "background.json", only="background")
    assert outcome.code == 1
    assert "background" in outcome.failing()
    assert "background.js: firefox-background loaded 111111111111" in outcome.reason("background")


def test_an_unreadable_results_file_is_a_usage_error(project):
    subject, _ = project
    missing = subject.gate("--results", str(Path(subject.root) / "nope.json"), report="nope-gate.json")
    assert missing.code == 2 and "nope.json: cannot read it" in missing.err


def test_the_gate_writes_its_json_to_stdout_with_json_dash(project):
    subject, live = project
    code, out, err = call_in(subject, "gate", "--results", str(subject.root / "merged.json"), *shard_coverage(subject),
                             "--acknowledged", str(subject.root / "policy" / "acknowledged.json"), "--json", "-")
    assert code == 0, err
    assert json.loads(out)["gate"] == live.json["gate"]
    assert f"gate PASSED: all {len(CHECKS)} checks" in err and not (Path.cwd() / "-").exists()


def test_the_gate_on_merged_shards_without_their_coverage_fails_the_coverage_check(project):
    subject, _ = project
    outcome = subject.gate("--results", str(subject.root / "merged.json"), report="no-coverage.json", only="coverage")
    assert outcome.code == 1 and outcome.failing() == {"coverage"}, outcome.out + outcome.err
    assert outcome.reason("coverage").startswith("gate --results: no coverage given; pass the shards' files")


def test_one_shard_s_coverage_alone_fails_the_coverage_check(project):
    subject, _ = project
    outcome = subject.gate("--results", str(subject.root / "merged.json"), "--coverage-from",
                           str(subject.root / "coverage-1.json"), report="half-coverage.json", only="coverage")
    assert outcome.code == 1 and outcome.failing() == {"coverage"}, outcome.out + outcome.err
    assert "its coverage saw" in outcome.reason("coverage") and "(a shard's coverage file missing?)" in outcome.reason("coverage")
