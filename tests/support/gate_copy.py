"""The gate tests' throwaway copy of the project (extension trees, release files, message
adapters, a corpus of six cases or the bundled one, the real `[tool.extparity]` table pointed at
the copy), which a scenario breaks in one or more ways, and what a gate run on it said."""

from __future__ import annotations

import json
import re
from pathlib import Path

from extparity import api
from extparity.gate import artifacts
from extparity.project.config import load_project
from extparity.project.kinds import engine_class
from toolcalls import parse_tool_calls_canonical, repair_arguments_canonical

from support import PARSER, ROOT, bundled_table
from support.cli import call_cli
from support.config_files import write_pyproject
from support.copies import copy_folders

# The allowlist rule of plain JSON calls, with the line before it so that it is found once.
ALLOWLIST_RULE = ('  if (typeof name !== "string" || name === "") return new Rejected("bad-name");\n'
                  '  if (!allowed.has(name)) return new Rejected("not-allowed", name);\n')
SMALL_ENGINES = ("python", "quickjs-chrome", "chromium", "firefox")
CHECKS = ["corpus", "trees", "manifests", "release", "policy", "purity", "scripts", "surfaces", "artifacts",
          "web-ext lint", "entry points", "background", "page scripts", "parity", "known deviations", "environment", "coverage", "fuzz"]
SMALL_FUZZ_BUDGET = 2000

PARSE_INPUTS = {
    "parse-own-line": ('{"name":"click","arguments":{"selector":"#a"}}', ["click"]),
    "parse-tagged": ('<tool_call>{"name":"click","arguments":{}}</tool_call>', ["click"]),
    "parse-narration": ('I will not call {"name":"click","arguments":{}} here.', ["click"]),
    "parse-not-allowed": ('{"name":"run_script","arguments":{}}', ["click"]),
}
REPAIR_INPUTS = {"repair-truncated": '{"a": [1, 2', "repair-valid": '{"a": 1}'}


def parse_case(case_id: str) -> dict:
    text, allowed = PARSE_INPUTS[case_id]
    verdict = json.loads(parse_tool_calls_canonical(text, allowed))
    return {"id": case_id, "fn": "parse", "input": text, "allowed": allowed, "tags": ["gate"], "why": "gate test",
            "expect": {"calls": [c["name"] for c in verdict["calls"]], "rejected": [r["reason"] for r in verdict["rejected"]]}}


def repair_case(case_id: str) -> dict:
    return {"id": case_id, "fn": "repair", "input": REPAIR_INPUTS[case_id], "tags": ["gate"], "why": "gate test",
            "expect": json.loads(repair_arguments_canonical(REPAIR_INPUTS[case_id]))}


def bundled_gate(key: str) -> list:
    """The bundled config's own entries under [tool.extparity.gate].KEY, which a copy keeps."""
    return bundled_table()["gate"].get(key, [])


def skip_allowlist_when(condition: str):
    """An edit that keeps the allowlist rule of plain JSON calls only while `condition` holds."""
    return lambda copy: copy.edit(PARSER, ALLOWLIST_RULE, ALLOWLIST_RULE.replace(
        "if (!allowed.has(name))", f"if (!allowed.has(name) && {condition})"))


def rule_line() -> int:
    """The line of the allowlist rule of plain JSON calls in the parser (one line lower with a
    top-level declaration added)."""
    text = (ROOT / "extension/chrome" / PARSER).read_text()
    return text[:text.index(ALLOWLIST_RULE)].count("\n") + 2


def top_level_line() -> int:
    """The line where a top-level declaration goes in the parser."""
    text = (ROOT / "extension/chrome" / PARSER).read_text()
    return text[:text.index("const NOT_A_CALL = ")].count("\n") + 1


def call_in(subject: "Copy", *argv: str) -> tuple[int, str, str]:
    """`extparity --config COPY ARGV...`: (exit code, stdout, stderr)."""
    return call_cli("--config", subject.config, *argv)


class Copy:
    """A throwaway copy of the project that a scenario breaks in one or more ways."""

    def __init__(self, root: Path, *, corpus: str = "small", deviations: list | None = None, engines=SMALL_ENGINES,
                 second_environments: bool = False, **gate_changes):
        """``second_environments``: keep the gate's default environments (test_gate_environment.py);
        without, the copy's gate runs the engines once, as the checks it tests need."""
        self.root = root
        copy_folders(root, "extension", "adapters", "policy")
        table = bundled_table()
        table["engines"] = {name: spec for name, spec in table["engines"].items() if name in engines}
        table["engines"]["python"]["path"] = str(ROOT / "py_src")
        table["gate"]["web_ext"]["command"] = str(ROOT / table["gate"]["web_ext"]["command"])
        if not second_environments:
            table["gate"]["environments"] = []
        if corpus != "bundled":  # a small corpus gets a small fuzz budget: each gate run here pays for it
            table["gate"]["fuzz"] = {"seed": 0, "cases": SMALL_FUZZ_BUDGET}
        if sum(engine_class(spec["kind"]).EXTENSION is None for spec in table["engines"].values()) < 2:
            table["gate"]["fuzz"] = {"cases": 0}  # no two headless engines to fuzz through: the test is about others
        table["gate"].update(gate_changes)
        if corpus == "bundled":
            table["corpus"] = [str(ROOT / "fixtures")]
            table["known_deviations"] = str(ROOT / "fixtures" / "known-deviations.json")
        else:
            self.write_corpus(corpus)
            table["corpus"] = ["corpus"]
            table["gate"]["minimum_cases"] = gate_changes.get("minimum_cases", {"parse": 1, "repair": 1})
            # Six cases run a fraction of the verified code: the coverage check judges only where a test asks.
            table["gate"]["block_coverage_floor"] = gate_changes.get("block_coverage_floor", 0)
            table["gate"]["reference_branch_floor"] = gate_changes.get("reference_branch_floor", 0)
            table["known_deviations"] = "known-deviations.json"
            (root / "known-deviations.json").write_text(json.dumps(deviations or []))
        self.table = table
        self.config = str(write_pyproject(root / "pyproject.toml", table))

    def reconfigure(self, change) -> None:
        """Change the copy's [tool.extparity] table (``change(table)``) and write it again."""
        change(self.table)
        write_pyproject(self.root / "pyproject.toml", self.table)

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

    def acknowledge_shipped(self) -> None:
        """Acknowledge every shipped file outside the verified modules as the copy's trees hold
        them now (a first release's review of what a scenario added or changed), in the file
        ``gate()`` passes."""
        from extparity.gate import policy

        project = load_project(self.config)
        lines = policy.trusted_unreviewed(policy.record(project, api.load_corpus(project), []))
        (self.root / "policy" / "acknowledged.json").write_text(json.dumps(
            [{"change": line, "reason": "reviewed by the test that wrote it", "link": "https://example.org/extparity"}
             for line in lines]))

    def edit_json(self, path: Path, change) -> None:
        document = json.loads(path.read_text(encoding="utf-8"))
        change(document)
        path.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")

    def gate(self, *extra: str, only: str | None = None, report: str = "gate.json", acknowledged: bool = True) -> "Outcome":
        """`extparity gate` on the copy; ``only``: the checks a scenario asserts on (`--only`), so
        it prepares and starts only what they need. Without ``--baseline`` or ``--acknowledged``
        in ``extra``, the bundled project's first-release acknowledgements come along (the copy's
        trees are the bundled ones: they name its shipped files) unless ``acknowledged`` is False."""
        selection = ("--only", only) if only else ()
        if acknowledged and not {"--baseline", "--acknowledged"} & set(extra):
            selection += ("--acknowledged", str(self.root / "policy" / "acknowledged.json"))
        code, out, err = call_in(self, "gate", "--json", str(self.root / report), *selection, *extra)
        path = self.root / report
        return Outcome(code, out, err, json.loads(path.read_text()) if path.is_file() else None)

    def dist(self) -> dict[str, bytes]:
        """The artifacts in dist/ (not the gate's record of what it wrote there)."""
        return {p.name: p.read_bytes() for p in sorted((self.root / "dist").iterdir())
                if p.is_file() and p.name != artifacts.RECORD}


def only_check(project, name: str, **options):
    """One check of the gate on ``project``, run alone as `gate --only NAME` runs it (only what it
    needs is prepared: a static check starts no engine)."""
    checks = api.gate(project, only=name, **options).result.checks
    assert [check.name for check in checks] == [name]
    return checks[0]


def only(copy: "Copy", name: str, **options):
    return only_check(load_project(copy.config), name, **options)


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

    def problems(self, check: str) -> list[str]:
        """Every problem behind a check's line, from the JSON report."""
        assert self.json is not None
        return next(c["problems"] for c in self.json["gate"]["checks"] if c["name"] == check)
