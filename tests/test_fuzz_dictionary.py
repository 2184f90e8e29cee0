"""Issue 37 item 4: a shipped script on the verdict path answers differently when the input
holds a marker only the subject spells or has one exact length, and the gate's fuzz budget has
to make such an input.

Where the attacks are planted: in the verified parser of BOTH trees, with the Python reference
unchanged. The verified modules must be byte-identical between trees (the gate's trees check),
so a rule an attacker can ship there passes that check and diverges from the reference only;
the quickjs-chrome engine, which loads the chrome tree, shows it. The budget is the gate's own
(``[tool.extparity.gate].fuzz``: seed and case count), through the reference and one headless
engine, so what is found here is what the gate's campaign finds.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from support import PARSER, bundled_table
from support.copies import copy_bundled_project

EXTPARITY = [sys.executable, "-m", "extparity.cli"]
ENTRY = "export function parseToolCallsCanonical(text, allowed) {\n"
ATTACKS = {
    # Two invisible separators, as the JS source spells them: no corpus case and no generator's
    # hazard table holds the pair.
    "marker": 'typeof text === "string" && text.includes("\\u2063\\u2063")',
    # A length no corpus case has and the generators' length table reached only by luck.
    "length": 'typeof text === "string" && text.length === 4096',
}


def planted(root: Path, attack: str) -> Path:
    """The bundled project copied, both trees' parser answering an internal error on ``attack``."""
    copy_bundled_project(root)
    rule = f'  if ({ATTACKS[attack]}) return canonical(errorVerdict("internal-error"));\n'
    for tree in ("chrome", "firefox"):
        path = root / "extension" / tree / PARSER
        text = path.read_text(encoding="utf-8")
        assert text.count(ENTRY) == 1, f"the parser's entry moved: {path}"
        path.write_text(text.replace(ENTRY, ENTRY + rule), encoding="utf-8")
    return root


@pytest.mark.slow
@pytest.mark.xfail(strict=True, reason="the generators never make the marker or the exact length (issue 37 item 4)")
@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_the_gate_budget_finds_a_rule_keyed_on_a_marker_or_an_exact_length(tmp_path, attack):
    project = planted(tmp_path / "project", attack)
    budget = bundled_table()["gate"]["fuzz"]
    done = subprocess.run([*EXTPARITY, "fuzz", "--seed", str(budget["seed"]), "--cases", str(budget["cases"]),
                           "--engines", "python,quickjs-chrome", "--max-findings", "1", "--out", "found",
                           "--json", "fuzz.json"], cwd=project, capture_output=True, text=True, timeout=600)
    assert done.returncode == 1, done.stderr + done.stdout
    case = json.loads((project / "found" / f"fuzz-{budget['seed']}.jsonl").read_text(encoding="utf-8"))
    assert case["why"].endswith("quickjs-chrome: diverges")
    if attack == "marker":
        assert "\u2063\u2063" in case["input"]
    else:
        assert len(case["input"].encode("utf-16-le", "surrogatepass")) == 2 * 4096
    report = json.loads((project / "fuzz.json").read_text(encoding="utf-8"))
    print(f"{attack}: found after {report['cases']:,} cases of seed {budget['seed']}")
