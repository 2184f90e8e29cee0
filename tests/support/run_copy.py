"""The run and report tests' throwaway copy of the subject: the bundled trees (made twins), a corpus
of nine cases whose expectations come from the Python reference, and the real [tool.extparity]
table pointed at them; and what `extparity run` said on it."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

from toolcalls import parse_tool_calls_canonical, repair_arguments_canonical

from support import PARSER, ROOT, bundled_table
from support.cli import call_cli
from support.config_files import write_pyproject
from support.copies import copy_bundled_trees
from support.result_schema import check_result

MODULES = ["src/agent/json-core.js", "src/agent/json-fast.js", "src/agent/tool-call-parser.js", "src/agent/argument-repair.js"]
QJS = "python,quickjs-chrome,quickjs-firefox"

# The rule scenario (c) of test_harness_runner breaks in both twins: "at most one comma after a bare object on its line".
COMMA_RULE = "  if (i < u.length && u.charCodeAt(i) === COMMA) i = skipInlineWs(u, i + 1);\n"

PARSE_INPUTS = {
    "parse-own-line": ('{"name":"click","arguments":{"selector":"#a"}}', ["click"]),
    "parse-trailing-comma": ('{"name":"click","arguments":{}},', ["click"]),
    "parse-trailing-comma-spaced": ('First:\n  {"name":"read_page","arguments":{}} ,  \ndone', ["read_page"]),
    "parse-narration": ('I will not call {"name":"click","arguments":{}} here.', ["click"]),
    "parse-tagged": ('<tool_call>{"name":"click","arguments":{}}</tool_call>', ["click"]),
    "parse-not-allowed": ('{"name":"run_script","arguments":{}}', ["click"]),
}
REPAIR_INPUTS = {
    "repair-truncated": '{"a": [1, 2',
    "repair-valid": '{"a": 1, "b": [true, null]}',
    "repair-garbage": "nope",
}
COMMA_CASES = {"parse-trailing-comma", "parse-trailing-comma-spaced"}  # what (c) must name, exactly


def parse_case(case_id: str, **overrides) -> dict:
    text, allowed = PARSE_INPUTS[case_id]
    verdict = json.loads(parse_tool_calls_canonical(text, allowed))
    expect = {"calls": [c["name"] for c in verdict["calls"]], "rejected": [r["reason"] for r in verdict["rejected"]],
              "error": verdict["error"]}
    return {"id": case_id, "fn": "parse", "input": text, "allowed": allowed, "expect": expect,
            "tags": ["harness"], "why": "harness test case", **overrides}


def repair_case(case_id: str) -> dict:
    verdict = json.loads(repair_arguments_canonical(REPAIR_INPUTS[case_id]))
    return {"id": case_id, "fn": "repair", "input": REPAIR_INPUTS[case_id], "expect": verdict,
            "tags": ["harness"], "why": "harness test case"}


class Project:
    """A throwaway copy of the subject: trees, corpus, config."""

    def __init__(self, root: Path, *, parse_lines=None, repair_lines=None, deviations=None, browsers=None):
        self.root = root
        copy_bundled_trees(root)
        # The copies start as twins even while someone is half-way through editing the real
        # ones: whether the real trees match is test_extension_trees' and test_parity's job;
        # here every difference between the copies must be one this test made on purpose.
        for module in MODULES:
            shutil.copyfile(self.module("chrome", module), self.module("firefox", module))
        corpus = root / "corpus"
        (corpus / "parse").mkdir(parents=True)
        (corpus / "repair").mkdir()
        (corpus / "tags.json").write_text(json.dumps({"harness": "written by test_harness_runner"}))
        parse_lines = [parse_case(i) for i in PARSE_INPUTS] if parse_lines is None else parse_lines
        repair_lines = [repair_case(i) for i in REPAIR_INPUTS] if repair_lines is None else repair_lines
        for rel, lines in (("parse/basic.jsonl", parse_lines), ("repair/basic.jsonl", repair_lines)):
            (corpus / rel).write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines))
        if deviations is not None:
            (root / "known-deviations.json").write_text(deviations if isinstance(deviations, str) else json.dumps(deviations))
        table = bundled_table()
        table.update(corpus=["corpus"], trees={"chrome": "ext/chrome", "firefox": "ext/firefox"})
        table.pop("known_deviations")
        if deviations is not None:
            table["known_deviations"] = "known-deviations.json"
        table["engines"]["python"]["path"] = str(ROOT / "py_src")
        for engine, executable in (browsers or {}).items():
            table["engines"][engine]["executable"] = executable
        self.config = str(write_pyproject(root / "pyproject.toml", table))

    def module(self, tree: str, module: str = PARSER) -> Path:
        return self.root / "ext" / tree / module

    def disk_hash(self, tree: str, module: str) -> str:
        return hashlib.sha256(self.module(tree, module).read_bytes()).hexdigest()

    def run(self, engines: str, json_name: str = "result.json", *extra: str) -> "Outcome":
        out_path = self.root / json_name
        code, out, err = call_cli("--config", self.config, "run", "--engines", engines, "--json", str(out_path), *extra)
        document = check_result(json.loads(out_path.read_text())) if out_path.exists() else None
        return Outcome(code, out, err, document, out_path)

    def diff(self, *args: str) -> tuple[int, str, str]:
        return call_cli("--config", self.config, "diff", *args)


class Outcome:
    def __init__(self, code, out, err, document, path):
        self.code, self.out, self.err, self.json, self.path = code, out, err, document, path

    def cells(self) -> dict[str, dict[str, str]]:
        return {case["id"]: case["cells"] for case in self.json["cases"]}

    def failure_lines(self) -> list[str]:
        _, _, tail = self.err.partition("\nFAILED:\n")
        return [line.strip() for line in tail.splitlines() if line.strip()]


def drop_comma_rule(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count(COMMA_RULE) == 1, "the own-line comma rule this test removes has moved"
    path.write_text(text.replace(COMMA_RULE, "  // (comma allowance removed by test_harness_runner)\n"), encoding="utf-8")


WRONG_EXPECT = parse_case("parse-tagged", id="parse-wrong-expect", expect={"calls": ["navigate"]})


def deviation(case: str, engines: list[str], **overrides) -> dict:
    return {"case": case, "engines": engines, "reason": "tracked upstream", "link": "https://example.invalid/1", **overrides}


# A rule only a browser has: the verified parser, where a document exists (an extension page, Firefox's
# background page; not a service worker, not a headless engine), drops the calls of an input that says
# "browser-only", and says so on the console. The gate's purity check would refuse it; `run` has none.
BROWSER_ONLY_CASE = "parse-browser-only"
BROWSER_ONLY_INPUT = ('{"name":"click","arguments":{"note":"browser-only"}}', ["click"])
_PARSER_ENTRY = "export function parseToolCalls(text, allowed) {\n"
_BROWSER_ONLY_RULE = ('  if (typeof document !== "undefined" && text.includes("browser-only")) {\n'
                      '    console.warn("planted browser-only rule dropped the calls of " + text);\n'
                      '    return parseChecked("", allowed);\n'
                      '  }\n')


def plant_browser_only_rule(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count(_PARSER_ENTRY) == 1, "the parser's entry this test plants a rule in has moved"
    path.write_text(text.replace(_PARSER_ENTRY, _PARSER_ENTRY + _BROWSER_ONLY_RULE), encoding="utf-8")


def browser_only_case() -> dict:
    PARSE_INPUTS[BROWSER_ONLY_CASE] = BROWSER_ONLY_INPUT
    try:
        return parse_case(BROWSER_ONLY_CASE)
    finally:
        del PARSE_INPUTS[BROWSER_ONLY_CASE]
