"""`extparity gate` end to end: it passes on the bundled extension, and every way `run` was
fooled now fails the gate with a one-line reason.

Each scenario is a throwaway copy of the project (extension trees, release files, message
adapters, a corpus, the real `[tool.extparity]` table pointed at the copy) with exactly the
breakage the issue describes. Browser start-ups are the cost here, so one gate run serves
several attacks whenever each lands on a different check and every check's line stays
unambiguous; the assertions name the check each attack must fail, and the checks that must
still pass. Engines in the small copies: the Python reference, QuickJS, Chromium and Firefox,
each browser through its modules and through its background.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import shutil
import tomllib
import zipfile
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from extparity import cli
from extparity.gate import artifacts
from toolcalls import parse_tool_calls_canonical, repair_arguments_canonical

from config_files import write_pyproject

ROOT = Path(__file__).resolve().parents[1]
VERSION = json.loads((ROOT / "extension/chrome/manifest.json").read_text())["version"]  # the version that ships
PARSER = "src/agent/tool-call-parser.js"
# The allowlist rule of plain JSON calls, with the line before it so that it is found once.
ALLOWLIST_RULE = ('  if (typeof name !== "string" || name === "") return new Rejected("bad-name");\n'
                  '  if (!allowed.has(name)) return new Rejected("not-allowed", name);\n')
SMALL_ENGINES = ("python", "quickjs-chrome", "chromium", "firefox")
CHECKS = ["corpus", "trees", "manifests", "release", "artifacts", "web-ext lint", "entry points", "background",
          "parity", "known deviations"]
LINK = "https://example.org/extparity/gate-test"

PARSE_INPUTS = {
    "parse-own-line": ('{"name":"click","arguments":{"selector":"#a"}}', ["click"]),
    "parse-tagged": ('<tool_call>{"name":"click","arguments":{}}</tool_call>', ["click"]),
    "parse-narration": ('I will not call {"name":"click","arguments":{}} here.', ["click"]),
    "parse-not-allowed": ('{"name":"run_script","arguments":{}}', ["click"]),
}
REPAIR_INPUTS = {"repair-truncated": '{"a": [1, 2', "repair-valid": '{"a": 1}'}
CASES = len(PARSE_INPUTS) + len(REPAIR_INPUTS)


def parse_case(case_id: str) -> dict:
    text, allowed = PARSE_INPUTS[case_id]
    verdict = json.loads(parse_tool_calls_canonical(text, allowed))
    return {"id": case_id, "fn": "parse", "input": text, "allowed": allowed, "tags": ["gate"], "why": "gate test",
            "expect": {"calls": [c["name"] for c in verdict["calls"]], "rejected": [r["reason"] for r in verdict["rejected"]]}}


def repair_case(case_id: str) -> dict:
    return {"id": case_id, "fn": "repair", "input": REPAIR_INPUTS[case_id], "tags": ["gate"], "why": "gate test",
            "expect": json.loads(repair_arguments_canonical(REPAIR_INPUTS[case_id]))}


def deviation(case: str, *engines: str) -> dict:
    return {"case": case, "engines": list(engines), "reason": "written by test_gate", "link": LINK}


class Copy:
    """A throwaway copy of the project that a scenario breaks in one or more ways."""

    def __init__(self, root: Path, *, corpus: str = "small", deviations: list | None = None, engines=SMALL_ENGINES,
                 **gate_changes):
        self.root = root
        shutil.copytree(ROOT / "extension", root / "extension")
        shutil.copytree(ROOT / "gate", root / "gate")
        table = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["extparity"]
        table["engines"] = {name: spec for name, spec in table["engines"].items() if name in engines}
        table["engines"]["python"]["path"] = str(ROOT / "py_src")
        table["gate"]["web_ext"]["command"] = str(ROOT / table["gate"]["web_ext"]["command"])
        table["gate"].update(gate_changes)
        if corpus == "bundled":
            table["corpus"] = [str(ROOT / "fixtures")]
            table["known_deviations"] = str(ROOT / "fixtures" / "known-deviations.json")
        else:
            self.write_corpus(corpus)
            table["corpus"] = ["corpus"]
            table["gate"]["minimum_cases"] = gate_changes.get("minimum_cases", {"parse": 1, "repair": 1})
            table["known_deviations"] = "known-deviations.json"
            (root / "known-deviations.json").write_text(json.dumps(deviations or []))
        self.config = str(write_pyproject(root / "pyproject.toml", table))

    def write_corpus(self, kind: str) -> None:
        corpus = self.root / "corpus"
        (corpus / "parse").mkdir(parents=True)
        (corpus / "repair").mkdir()
        (corpus / "tags.json").write_text(json.dumps({"gate": "written by test_gate"}))
        parse = [] if kind == "empty" else [parse_case(i) for i in PARSE_INPUTS]
        repair = [] if kind == "empty" else [repair_case(i) for i in REPAIR_INPUTS]
        (corpus / "parse" / "basic.jsonl").write_text("".join(json.dumps(c) + "\n" for c in parse))
        (corpus / "repair" / "basic.jsonl").write_text("".join(json.dumps(c) + "\n" for c in repair))

    def tree(self, name: str) -> Path:
        return self.root / "extension" / name

    def edit(self, rel: str, old: str, new: str, trees=("chrome", "firefox")) -> None:
        for tree in trees:
            path = self.tree(tree) / rel
            text = path.read_text(encoding="utf-8")
            assert text.count(old) == 1, f"{rel}: the text this test changes has moved"
            path.write_text(text.replace(old, new), encoding="utf-8")

    def write(self, rel: str, text: str, trees=("chrome", "firefox")) -> None:
        for tree in trees:
            (self.tree(tree) / rel).parent.mkdir(parents=True, exist_ok=True)
            (self.tree(tree) / rel).write_text(text, encoding="utf-8")

    def edit_json(self, path: Path, change) -> None:
        document = json.loads(path.read_text(encoding="utf-8"))
        change(document)
        path.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")

    def gate(self, *extra: str, report: str = "gate.json") -> "Outcome":
        out, err = io.StringIO(), io.StringIO()
        with redirect_stdout(out), redirect_stderr(err):
            code = cli.main(["--config", self.config, "gate", "--json", str(self.root / report), *extra])
        path = self.root / report
        return Outcome(code, out.getvalue(), err.getvalue(), json.loads(path.read_text()) if path.is_file() else None)

    def dist(self) -> dict[str, bytes]:
        return {p.name: p.read_bytes() for p in sorted((self.root / "dist").iterdir()) if p.is_file()}


class Outcome:
    def __init__(self, code: int, out: str, err: str, document: dict | None):
        self.code, self.out, self.err, self.json = code, out, err, document
        self.lines = {}
        for line in out.splitlines():
            match = re.match(r"(PASS|FAIL) ([a-z -]+?): (.*)", line)
            if match:
                self.lines[match.group(2)] = (match.group(1), match.group(3))

    def failing(self) -> set[str]:
        return {name for name, (mark, _) in self.lines.items() if mark == "FAIL"}

    def reason(self, check: str) -> str:
        return self.lines[check][1]


# ------------------------------------------------------------------ the bundled extension

def test_the_gate_passes_on_the_bundled_extension_and_counts_its_known_deviations(tmp_path):
    outcome = Copy(tmp_path, corpus="bundled", engines=tomllib.loads((ROOT / "pyproject.toml").read_text())
                   ["tool"]["extparity"]["engines"]).gate()
    assert outcome.code == 0, outcome.out + outcome.err
    assert list(outcome.lines) == CHECKS and outcome.failing() == set()
    assert outcome.out.strip().endswith("gate PASSED: all 10 checks")
    parity = outcome.reason("parity")
    known = json.loads((ROOT / "fixtures/known-deviations.json").read_text())
    cells = sum(len(entry["engines"]) for entry in known)
    assert re.match(rf"\d+ of \d+ cases agree across .*; {len(known)} cases \({cells} cells\) are known deviations", parity), parity
    assert "chromium-background, firefox-background answered all" in outcome.reason("entry points")
    assert outcome.json["ok"] is True and outcome.json["gate"]["ok"] is True
    for artifact in outcome.json["gate"]["artifacts"].values():
        assert artifact["sha256"] == hashlib.sha256((tmp_path / artifact["path"]).read_bytes()).hexdigest()


# ------------------------------------------------------------------ determinism, and a known deviation

SW_ONLY = ALLOWLIST_RULE.replace("if (!allowed.has(name))",
                                 'if (!allowed.has(name) && typeof ServiceWorkerGlobalScope === "undefined")')


@pytest.fixture(scope="module")
def twice(tmp_path_factory):
    """A copy whose parser skips the allowlist only inside Chromium's service worker, with that
    divergence declared as a known deviation: gated twice."""
    copy = Copy(tmp_path_factory.mktemp("twice"), deviations=[deviation("parse-not-allowed", "chromium-background")])
    copy.edit(PARSER, ALLOWLIST_RULE, SW_ONLY)
    first = copy.gate(report="first.json")
    first_dist = copy.dist()
    second = copy.gate(report="second.json")
    return copy, first, first_dist, second


def test_a_known_deviation_passes_but_the_summary_counts_it_instead_of_claiming_all_agree(twice):
    _, first, _, _ = twice
    assert first.code == 0, first.out + first.err
    assert first.failing() == set()
    assert first.reason("parity").startswith(f"{CASES - 1} of {CASES} cases agree across")
    assert first.reason("parity").endswith("; 1 cases (1 cells) are known deviations")
    assert "all " not in first.reason("parity")
    assert first.reason("known deviations").startswith("1 cases (1 cells) are known deviations in known-deviations.json")


def test_two_gate_runs_give_byte_identical_artifacts_and_reports(twice):
    copy, first, first_dist, second = twice
    assert second.code == 0, second.out + second.err
    assert (copy.root / "first.json").read_bytes() == (copy.root / "second.json").read_bytes()
    assert copy.dist() == first_dist
    assert sorted(first_dist) == [f"tool-call-inspector-{VERSION}-chrome.zip", f"tool-call-inspector-{VERSION}-firefox.xpi"]


def test_the_engines_ran_on_the_unpacked_artifacts_and_the_report_records_their_hashes(twice):
    copy, first, first_dist, _ = twice
    recorded = first.json["gate"]["artifacts"]
    for tree, name in (("chrome", f"tool-call-inspector-{VERSION}-chrome.zip"), ("firefox", f"tool-call-inspector-{VERSION}-firefox.xpi")):
        assert recorded[tree] == {"path": f"dist/{name}", "sha256": hashlib.sha256(first_dist[name]).hexdigest(), "files": 8}
        assert artifacts.contents(first_dist[name]) == {
            p.relative_to(copy.tree(tree)).as_posix(): p.read_bytes() for p in copy.tree(tree).rglob("*") if p.is_file()}
    for engine in ("chromium", "chromium-background", "firefox", "firefox-background", "quickjs-chrome"):
        assert first.json["engines"][engine]["versions"]["tree"].startswith("dist/.unpacked/")
    assert not (copy.root / "dist" / ".unpacked").exists()


def test_the_deterministic_zip_has_fixed_order_times_and_modes(twice):
    _, _, first_dist, _ = twice
    with zipfile.ZipFile(io.BytesIO(first_dist[f"tool-call-inspector-{VERSION}-chrome.zip"])) as archive:
        infos = archive.infolist()
    assert [i.filename for i in infos] == sorted(i.filename for i in infos)
    assert {(i.date_time, i.external_attr >> 16, i.extra) for i in infos} == {((1980, 1, 1, 0, 0, 0), 0o100644, b"")}


# ------------------------------------------------------------------ attack: a laxer parser copy behind the Firefox manifest

def test_a_firefox_background_pointed_at_a_laxer_parser_copy_fails(tmp_path):
    copy = Copy(tmp_path)
    lax = (copy.tree("chrome") / PARSER).read_text().replace(ALLOWLIST_RULE, ALLOWLIST_RULE.splitlines(True)[0])
    lax = lax.replace('"./json-core.js"', '"../json-core.js"')
    copy.write("src/agent/lax/tool-call-parser.js", lax)
    background = (copy.tree("chrome") / "background.js").read_text()
    copy.write("background-lax.js", background.replace("./src/agent/tool-call-parser.js", "./src/agent/lax/tool-call-parser.js"))
    copy.edit_json(copy.tree("firefox") / "manifest.json", lambda m: m["background"].update(scripts=["background-lax.js"]))
    outcome = copy.gate()
    assert outcome.code == 1
    assert outcome.failing() == {"background", "parity"}
    assert outcome.reason("background") == (
        "firefox: its background does not load src/agent/tool-call-parser.js, which the engines verified (and 1 more)")
    assert "the backgrounds load different scripts: firefox loads background-lax.js, src/agent/lax/tool-call-parser.js" \
        in outcome.json["gate"]["checks"][CHECKS.index("background")]["problems"][1]
    assert outcome.reason("parity") == (
        "parse-not-allowed [firefox-background] DIVERGES: differs from python  (corpus/parse/basic.jsonl:4)")


# ------------------------------------------------------------------ attacks: only in the service worker; a module outside the verified set

def test_a_parser_that_differs_only_in_the_service_worker_and_a_drifted_dynamic_import_fail(tmp_path):
    copy = Copy(tmp_path, deviations=[deviation("parse-tagged", "quickjs-chrome")])
    copy.edit(PARSER, ALLOWLIST_RULE, SW_ONLY)
    # inspector.js (not an entry) imports a module dynamically; that module drifts in one tree
    copy.edit("inspector.js", 'const $ = (id)', 'import("./src/agent/format.js").catch(() => {});\n\nconst $ = (id)')
    copy.write("src/agent/format.js", "export const style = 'plain';\n", trees=["chrome"])
    copy.write("src/agent/format.js", "export const style = 'fancy';\n", trees=["firefox"])
    outcome = copy.gate("--allow-stale")
    assert outcome.code == 1
    assert outcome.failing() == {"trees", "parity"}
    assert outcome.reason("trees") == "src/agent/format.js: differs between chrome and firefox (first at byte 22)"
    assert outcome.reason("parity") == (
        "parse-not-allowed [chromium-background] DIVERGES: differs from python  (corpus/parse/basic.jsonl:4)")
    # --allow-stale: the stale entry is said, not failed
    assert outcome.reason("known deviations").endswith("; 1 stale entries allowed by --allow-stale (parse-tagged)")


# ------------------------------------------------------------------ attacks: a background that throws; deviations that lie; too few cases

def test_a_background_that_throws_bad_deviation_entries_and_too_few_cases_fail(tmp_path):
    copy = Copy(tmp_path, minimum_cases={"parse": 100, "repair": 1},
                deviations=[deviation("no-such-case", "python"), deviation("parse-tagged", "quickjs-chrome")])
    background = "throw new Error(\"background broke at start-up\");\n"
    for tree in ("chrome", "firefox"):
        path = copy.tree(tree) / "background.js"
        path.write_text(path.read_text() + background)
    outcome = copy.gate()
    assert outcome.code == 1
    assert outcome.failing() == {"corpus", "entry points", "background", "parity", "known deviations"}
    assert outcome.reason("corpus") == "parse: 4 cases, fewer than the 100 that [tool.extparity.gate].minimum_cases asks for"
    assert outcome.reason("entry points").startswith(
        "chromium-background: crashed: the extension's service worker failed at start-up: Uncaught Error: background broke at start-up")
    assert "firefox-background: crashed: the extension's background failed at start-up: Error: background broke at start-up" \
        in outcome.json["gate"]["checks"][CHECKS.index("entry points")]["problems"][1]
    assert outcome.reason("known deviations") == (
        "known-deviations.json[0]: no case 'no-such-case' in the corpus (and 1 more)")
    problems = outcome.json["gate"]["checks"][CHECKS.index("known deviations")]["problems"]
    assert problems[1] == "stale entry: parse-tagged no longer deviates on quickjs-chrome: remove it (or pass --allow-stale)"


# ------------------------------------------------------------------ attacks: no cases; a drifted byte; a version; a changed artifact

def test_an_empty_corpus_a_drifted_byte_a_changed_version_and_a_changed_artifact_fail(tmp_path):
    copy = Copy(tmp_path, corpus="empty", glue=["inspector.html", "gone.js"])
    copy.edit("inspector.html", "<title>Tool Call Inspector</title>", "<title>Tool Call Inspector (Chrome)</title>",
              trees=["chrome"])  # declared glue: allowed to differ
    css = copy.tree("firefox") / "inspector.css"
    css.write_bytes(css.read_bytes().replace(b"{", b"{ ", 1))
    copy.edit_json(copy.root / "extension" / "package.json", lambda p: p.update(version="9.9.9"))
    # an artifact of this version already in dist/, whose bytes someone changed after the build
    original = artifacts.pack(copy.tree("chrome"))
    files = artifacts.contents(original)
    files["src/agent/json-core.js"] = files["src/agent/json-core.js"].replace(b"export", b"export ", 1)
    tampered = io.BytesIO()
    with zipfile.ZipFile(tampered, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    (copy.root / "dist").mkdir()
    (copy.root / "dist" / f"tool-call-inspector-{VERSION}-chrome.zip").write_bytes(tampered.getvalue())
    outcome = copy.gate()
    assert outcome.code == 1
    assert outcome.failing() == {"corpus", "trees", "release", "artifacts", "entry points", "background", "parity"}
    assert outcome.reason("corpus") == "no cases: a gate on zero cases proves nothing"
    first = css.read_bytes().index(b"{ ")
    assert outcome.reason("trees") == f"inspector.css: differs between chrome and firefox (first at byte {first + 1}) (and 1 more)"
    assert outcome.json["gate"]["checks"][CHECKS.index("trees")]["problems"][1] == \
        "glue gone.js: in no tree ([tool.extparity.gate].glue)"
    assert outcome.reason("release") == (
        f"versions disagree: extension/chrome/manifest.json={VERSION}, extension/firefox/manifest.json={VERSION}, "
        f"extension/package.json=9.9.9, extension/CHANGELOG.md={VERSION}")
    assert outcome.reason("artifacts").startswith(
        f"tool-call-inspector-{VERSION}-chrome.zip: an artifact of this name already exists with other bytes")
    assert (copy.root / "dist" / f"tool-call-inspector-{VERSION}-chrome.zip").read_bytes() == tampered.getvalue()
    assert "all 0 cases agree" not in outcome.out


def test_a_gate_without_browser_engines_cannot_pass_on_headless_engines_alone(tmp_path):
    outcome = Copy(tmp_path, engines=("python", "quickjs-chrome")).gate()
    assert outcome.code == 1
    assert outcome.failing() == {"entry points", "background"}
    assert outcome.reason("entry points") == ("no engine goes through the extension's background: configure browser "
                                              "engines and [tool.extparity.gate].messages")
    assert outcome.reason("background").startswith("no browser reported the scripts its background loaded")
    assert "web-ext lint" not in outcome.lines  # no Firefox tree in this config


# ------------------------------------------------------------------ usage and config errors: exit 2 before anything runs

def test_a_report_path_that_cannot_be_written_exits_2_before_anything_runs(tmp_path):
    copy = Copy(tmp_path)
    (tmp_path / "a-folder").mkdir()
    outcome = copy.gate(report="a-folder")
    assert outcome.code == 2 and "is a directory, not a file" in outcome.err
    assert not (tmp_path / "dist").exists()


@pytest.mark.parametrize(("change", "words"), [
    ({"minimum_cases": {"parse": 0}}, "minimum_cases.parse: expected a whole number of at least 1"),
    ({"minimum_cases": {"nope": 5}}, "minimum_cases: no entry named 'nope'"),
    ({"glue": "background.js"}, "glue: expected a list of non-empty strings"),
    ({"messages": {"parse": "gate/messages/parse.js"}}, "need a message adapter for every entry; none for repair"),
    ({"web_ext": {"allow": []}}, "web_ext: missing key 'command'"),
    ({"colour": "red"}, "unknown key 'colour'"),
])
def test_a_malformed_gate_table_exits_2_naming_the_key(tmp_path, change, words):
    table = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["extparity"]
    table["gate"] = {**table["gate"], **change}
    config = write_pyproject(tmp_path / "pyproject.toml", {**table, "trees": {
        "chrome": str(ROOT / "extension/chrome"), "firefox": str(ROOT / "extension/firefox")}})
    err = io.StringIO()
    with redirect_stdout(io.StringIO()), redirect_stderr(err):
        code = cli.main(["--config", str(config), "gate"])
    assert code == 2 and words in err.getvalue(), err.getvalue()


# ------------------------------------------------------------------ web-ext's report, judged

def lint_report(*warnings: str, errors: tuple[str, ...] = ()) -> dict:
    return {"summary": {"errors": len(errors), "warnings": len(warnings), "notices": 0},
            "errors": [{"code": c, "file": "manifest.json", "message": c.lower()} for c in errors],
            "warnings": [{"code": c, "file": "manifest.json", "message": c.lower()} for c in warnings], "notices": []}


@pytest.mark.parametrize(("found", "allow", "ok", "line"), [
    (lint_report(), (), True, "0 errors, 0 warnings, 0 notices"),
    (lint_report("MISSING_DATA_COLLECTION_PERMISSIONS"), ("MISSING_DATA_COLLECTION_PERMISSIONS",), True,
     "0 errors, 1 warnings, 0 notices; accepted by config: MISSING_DATA_COLLECTION_PERMISSIONS"),
    (lint_report("UNSAFE_VAR_ASSIGNMENT"), (), False, "warning UNSAFE_VAR_ASSIGNMENT (manifest.json): unsafe_var_assignment"),
    (lint_report(errors=("ADDON_ID_REQUIRED",)), ("ADDON_ID_REQUIRED",), False,
     "error ADDON_ID_REQUIRED (manifest.json): addon_id_required (and 1 more)"),
    (lint_report(), ("MISSING_DATA_COLLECTION_PERMISSIONS",), False,
     "allowed warning MISSING_DATA_COLLECTION_PERMISSIONS no longer occurs: remove it from [tool.extparity.gate].web_ext.allow"),
])
def test_web_ext_errors_always_fail_and_warnings_unless_accepted_while_they_still_occur(found, allow, ok, line):
    from extparity.subject.weblint import judge

    result = judge(found, allow)
    assert (result.ok, result.line) == (ok, line)


def test_a_web_ext_that_is_not_installed_fails_instead_of_skipping(tmp_path):
    from extparity.subject.weblint import Lint

    result = Lint(str(tmp_path / "no-web-ext"), tmp_path, ()).result()
    assert not result.ok and result.line.startswith(f"web-ext not found ({tmp_path / 'no-web-ext'})")
