"""Known deviations reach fuzzing: an engine quirk the project accepted on a corpus case (with a
reason and a link) is accepted on generated cases that show that quirk and nothing else; any
other finding still fails (``extparity.fuzz.quirks``).

The quirk is a real one: QuickJS-ng misrounds near-midpoint number literals of about 39 digits.
The bundled subject reads such literals exactly; a copy that trusts the engine's parseFloat for
every literal shows QuickJS's misrounding in its verdicts, with other digits in every generated
case, which failed the fuzz check at every run.
"""

from __future__ import annotations

import hashlib
import json

import pytest

from extparity import api
from extparity.corpus.cases import Case
from extparity.corpus.deviations import Deviation
from extparity.fuzz.quirks import Quirks
from extparity.project.config import load_project
from extparity.run.judge import CaseResult
from extparity.run.outcomes import Outcome

from support.gate_copy import Copy, repair_case


TRUST_THE_ENGINE = ("const TRUSTED_DIGITS = 19;", "const TRUSTED_DIGITS = 800;")
QUIRK = "repair-quickjs-misrounds-39-digits"
LITERAL = '{"":1.11314615985976686552907419344402140088e-259'  # a literal QuickJS-ng misrounds
LINK = "https://github.com/quickjs-ng/quickjs/issues"
ENGINES = ("python", "quickjs-chrome", "v8-chrome")
BAND = 'const verdict = new Verdict(raw.length >= 300 && raw.length < 340 ? { has: () => true } : new Set(allowed), raw);'


def quirky(tmp_path, **entry) -> Copy:
    """A copy whose parser trusts the engine's parseFloat, with a corpus case showing QuickJS's
    misrounding declared a known deviation of quickjs-chrome (``entry``: more of its fields)."""
    deviation = {"case": QUIRK, "engines": ["quickjs-chrome"], "reason": "QuickJS-ng misrounds near-midpoint "
                 "literals of 39 digits", "link": LINK, **entry}
    copy = Copy(tmp_path, engines=ENGINES, deviations=[deviation], fuzz={"seed": 1, "cases": 3000})
    copy.edit("src/agent/json-core.js", *TRUST_THE_ENGINE)
    case = {**repair_case("repair-valid"), "id": QUIRK, "input": LITERAL, "expect": "reference"}
    with (copy.root / "corpus" / "repair" / "basic.jsonl").open("a") as corpus:
        corpus.write(json.dumps(case) + "\n")
    # The deviating verdict pinned, as the gate requires: QuickJS's own, read from a run of it.
    verdict = api.run(load_project(copy.config), engines=["quickjs-chrome"]).result.runs["quickjs-chrome"].verdicts[QUIRK]
    deviation["verdicts"] = {"quickjs-chrome": hashlib.sha256(verdict.encode()).hexdigest()}
    (copy.root / "known-deviations.json").write_text(json.dumps([deviation]))
    return copy


@pytest.mark.gate
def test_a_quirk_accepted_for_its_numbers_is_accepted_on_generated_cases_and_parity_agrees(tmp_path):
    copy = quirky(tmp_path, fuzz="numbers")
    outcome = copy.gate(only="parity,known deviations,fuzz")
    assert outcome.code == 0, outcome.out + outcome.err
    line = outcome.reason("fuzz")
    assert line.startswith("3,000 generated cases of seed 1, seeded from the corpus, through python, quickjs-chrome, "
                           "v8-chrome: no divergence, engine error or reference exception; "), line
    assert line.endswith(f"generated cases showed only a known deviation ({QUIRK} {line.split(f'{QUIRK} ')[1]}"), line
    assert outcome.reason("known deviations").startswith("1 case (1 cell) is a known deviation")


@pytest.mark.gate
def test_without_the_numbers_scope_only_the_very_same_difference_is_accepted(tmp_path):
    """The entry without "fuzz": generated cases misround other digits, which is another difference."""
    outcome = quirky(tmp_path).gate(only="fuzz")
    assert outcome.code == 1
    assert outcome.failing() == {"fuzz"}
    assert "quickjs-chrome diverges" in outcome.reason("fuzz")


@pytest.mark.gate
def test_any_other_finding_still_fails_beside_an_accepted_quirk(tmp_path):
    copy = quirky(tmp_path, fuzz="numbers")
    copy.edit("src/agent/tool-call-parser.js", "const verdict = new Verdict(new Set(allowed), raw);", BAND)
    outcome = copy.gate(only="fuzz")
    assert outcome.code == 1
    assert "v8-chrome diverges" in outcome.reason("fuzz"), outcome.reason("fuzz")  # V8 has no accepted quirk


def judged(baseline: str, verdict: str) -> CaseResult:
    case = Case(id=QUIRK, fn="repair", fields={"input": LITERAL}, expect="reference", tags=(), why="", file="f",
                line=1, group="g")
    return CaseResult(case, cells={"python": Outcome.PASS, "quickjs-chrome": Outcome.DIVERGES},
                      verdicts={"python": baseline, "quickjs-chrome": verdict}, baseline=baseline)


def test_an_entry_is_held_to_what_its_own_case_shows_and_accepts_no_more():
    """Unit level: the quirk is learnt from the entry's case; "numbers" must be borne out there."""
    numbers = Deviation(QUIRK, ("quickjs-chrome",), "r", LINK, fuzz="numbers")
    exact = Deviation(QUIRK, ("quickjs-chrome",), "r", LINK)
    shown = judged('{"a":1.5,"b":"x"}', '{"a":1.25,"b":"x"}')
    claimed = Quirks.learn([(numbers, shown.case)], [judged('{"a":1.5,"b":"x"}', '{"a":1.5,"b":"y"}')], "kd.json")
    assert claimed.quirks == [] and claimed.problems == [
        'kd.json: repair-quickjs-misrounds-39-digits: "fuzz": "numbers", but quickjs-chrome differs from the '
        'baseline there in more than numbers']
    widened = Quirks.learn([(numbers, shown.case)], [shown], "kd.json")
    assert widened.accepts(judged('{"a":7,"b":"x"}', '{"a":8,"b":"x"}')) == numbers
    assert widened.accepts(judged('{"a":7,"b":"x"}', '{"a":8,"b":"z"}')) is None  # a string changed too
    assert widened.accepts(judged('{"a":7}', '{"a":[8]}')) is None  # the shape changed
    same = Quirks.learn([(exact, shown.case)], [shown], "kd.json")
    assert same.accepts(judged('{"a":1.5,"c":1}', '{"a":1.25,"c":1}')) == exact
    assert same.accepts(judged('{"a":2.5}', '{"a":2.25}')) is None
