"""Nothing the change controls is trusted: the attacks of issue 36 on code and files a change
controls, each a broken copy of the project named after its class. The gate before this change
passed every one of them (each test's docstring says what it printed).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from support.gate_copy import Copy, skip_allowlist_when

HEADLESS = ("python", "quickjs-chrome", "quickjs-firefox")


# ------------------------------------------------------------------ code and policy the change controls

EVIL_PLUGIN = '''"""A fuzz plugin that reaches into the process that loads it."""
import os
import sys

from extparity.fuzz.generators import BUILTIN
from extparity.gate import runner

# Every check of the gate that loads this passes: its results so far, and those still to come.
runner.check = lambda name, problems, passing: runner.Check(name, True, passing or "patched")
frame = sys._getframe()
while frame is not None:
    for value in list(frame.f_locals.values()):
        for item in value if isinstance(value, list) else ():
            if isinstance(item, runner.Check):
                item.ok, item.problems = True, []
    frame = frame.f_back
sys.modules["extparity.gate.runner"].check = runner.check
# ... and the campaign that would run this plugin's cases finds nothing.
from extparity.fuzz import campaign
campaign.Campaign.run = lambda self: campaign.CampaignResult(cases=self.options.cases)



def spawn():  # CPython's own process spawner, which no audit hook sees (3.11's arguments)
    from _posixsubprocess import fork_exec
    errors, done = os.pipe()
    fork_exec([b"/usr/bin/touch", (ESCAPED + ".forked").encode()], [b"/usr/bin/touch"], True, (done,), None, None,
              -1, -1, -1, -1, -1, -1, errors, done, True, False, -1, None, None, None, -1, None, False)


ESCAPES = []
for attempt in (lambda: open(ESCAPED, "w").write("written from the plugin"),
                lambda: os.system("touch " + ESCAPED + ".sh"),
                lambda: os.kill(os.getppid(), 0),
                spawn):
    try:
        attempt()
        ESCAPES.append(attempt)
    except Exception:
        pass

GENERATORS = {"plain": BUILTIN["mutate"]}
'''


def with_evil_plugin(copy: Copy) -> Path:
    escaped = copy.root / "escaped.txt"
    (copy.root / "evil_plugin.py").write_text(EVIL_PLUGIN.replace("ESCAPED", json.dumps(str(escaped))))
    copy.reconfigure(lambda table: table["fuzz"]["plugins"].append("evil_plugin.py"))
    return escaped


@pytest.mark.gate
def test_change_controlled_code_a_fuzz_plugin_that_patches_the_gate_to_pass_flips_nothing(tmp_path):
    """Before: `gate PARTIAL: the 2 checks run passed` over a parser that accepts every tool: the
    plugin ran in the gate's process and set every check's result to PASS."""
    copy = Copy(tmp_path, engines=HEADLESS)
    skip_allowlist_when("false")(copy)
    escaped = with_evil_plugin(copy)
    outcome = copy.gate(only="parity,fuzz")
    assert outcome.code == 1 and outcome.failing() == {"parity", "fuzz"}, outcome.out + outcome.err
    assert outcome.reason("parity").startswith("parse-not-allowed [quickjs-chrome] DIVERGES"), outcome.reason("parity")
    assert "diverges" in outcome.reason("fuzz"), outcome.reason("fuzz")  # the campaign ran: nothing stubbed it
    assert [path.name for path in copy.root.glob("escaped*")] == []
