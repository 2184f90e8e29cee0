"""Coverage-guided generation for ``extparity fuzz --guided``: the Python reference's arcs
(line-to-line transitions in its own files, what coverage.py calls arcs: branches taken) are
read for every generated case, and an input that reaches an arc no earlier input reached is
kept and mutated first, with the words of the splice dictionary (``dictionary.py``) spliced in.

Why the reference and why ``sys.settrace``: its coverage is the one this process can read
cheaply (no browser protocol, no engine binding), Python 3.11 has no ``sys.monitoring``, and
the reference implements the same contract as the twins, so a branch of the contract the corpus
never took is a branch of the reference it never took. The reference is loaded here as its
engine's worker loads it (the kind's ``in_process_host``: for the python kind, the configured
path, refusing a package found elsewhere) and traced at generation time; the engines still
judge every case as in an unguided campaign.

Which values to splice: every word of the splice dictionary (the literals and character codes of
every script on the verdict path), most often those the reference's source never spells
(``twin_only``). A value one
twin compares against and the other does not is where the twins can part: a rule planted in the
JS twin behind a magic sequence is such a value, and the reference's coverage cannot point at
it (its branch is not in the reference). A list argument (an allowlist) also loses items at
random: most corpus texts' calls are allowed, and a rule that lets a refused call run shows only
where a call is refused. What each choice is worth: the comment on the shares below.

Deterministic: case ``i`` is made by ``random.Random(f"{S}/guided/{i}")`` from what cases
``0..i-1`` reached, so one seed gives one sequence of cases and one findings file. Unlike an
unguided campaign, case ``i`` cannot be made alone (``--start``); a finding replays from the
corpus line it is written as.
"""

from __future__ import annotations

import ast
import io
import json
import random
import sys
import tokenize
from pathlib import Path
from typing import Any, Mapping

from ..corpus.cases import PARITY_ONLY, Case
from ..project.config import Project
from ..project.kinds import build_engine
from .campaign import FUZZ_TAG, CaseFactory
from .generators import BUILTIN, FuzzTarget, GeneratorError, spliced_in

Arc = tuple[str, int, int]  # file, line before (minus the first line on entry), line
GUIDED = "guided"  # the generator name guided cases are counted under
MUTATORS = ("mutate", "splice", "truncate", "unicode")  # the built-in edits applied to kept inputs
RECENT = 32  # kept inputs the choice favours: the newest reached what the others did not
# Measured over the bundled corpus with a rule planted behind a JS-only sequence (benchmarks/
# guided_findings.py, 16 seeds of 3,000 cases): every literal equally likely, kept inputs 80% of
# parents, lists whole: 0 seeds found it. Twin-only literals in 80% of splices, kept inputs half
# the parents, and a list argument halved in half the cases (an allowlist that refuses the calls
# the parent makes, so a rule that lets a call through shows): 13. Without the halving: 6; with
# kept inputs at 80%: 9.
KEPT_SHARE = 0.5  # of parents, when both kept inputs and corpus cases exist
NARROW_SHARE = 0.5  # of guided cases, each list argument keeps a random half of its items
TWIN_ONLY_SHARE = 0.8  # of splices, a value the reference never spells (when there is one)


class ReferenceCoverage:
    """The Python reference, loaded in this process, run on a case with its lines traced."""

    def __init__(self, project: Project) -> None:
        spec = project.engines.get(project.reference or "")
        host = build_engine(spec, project).in_process_host() if spec is not None else None
        if host is None:
            raise GeneratorError("--guided reads the coverage of the Python reference in this process: configure "
                                 "a reference engine whose kind can load it here (kind \"python\")")
        self.host = host
        modules = {getattr(module, "__file__", None) for module in list(sys.modules.values())}
        wanted = set(self.host.hashes)
        self.files = frozenset(path for path in modules if isinstance(path, str)
                               and any(Path(path).as_posix().endswith("/" + name) for name in wanted))
        if not self.files:
            raise GeneratorError("--guided: none of the reference's files is loaded in this process")

    def arcs(self, case: Case) -> set[Arc]:
        reached: set[Arc] = set()
        files = self.files

        def enter(frame, event, arg):
            name = frame.f_code.co_filename
            if name not in files:
                return None
            last = -frame.f_code.co_firstlineno

            def step(frame, event, arg):
                nonlocal last
                if event == "line":
                    line = frame.f_lineno
                    reached.add((name, last, line))
                    last = line
                return step

            return step

        cases_json = json.dumps([{"id": case.id, "fn": case.fn, "args": list(case.fields.values())}], ensure_ascii=True)
        previous = sys.gettrace()
        sys.settrace(enter)
        try:
            list(self.host.run_cases(cases_json, 0))
        finally:
            sys.settrace(previous)
        return reached


class GuidedFactory:
    """``CaseFactory``'s interface: half the cases are the unguided campaign's own, half are
    edits of an input that reached new arcs (or of a corpus case), literals spliced in and list
    arguments narrowed."""

    def __init__(self, base: CaseFactory, coverage: ReferenceCoverage, literals: tuple[str, ...],
                 corpus: dict[str, list[Case]]) -> None:
        self.base = base
        self.seed = base.seed
        self.coverage = coverage
        self.literals = literals
        self.twin_only = twin_only(literals, reference_literals(coverage.files))
        self.entry_names = base.entry_names
        self.generators = {entry: [*names, GUIDED] for entry, names in base.generators.items()}
        self.reached: set[Arc] = set()
        for cases in corpus.values():  # "new" means new beyond what the corpus already reaches
            for case in cases:
                if case.fn in base.targets:
                    self.reached |= coverage.arcs(case)
        self.corpus_reached = frozenset(self.reached)
        self.corpus_arcs = len(self.reached)
        self.kept: dict[str, list[dict[str, Any]]] = {entry: [] for entry in base.entry_names}
        self.last_arcs: set[Arc] = set()  # what the latest case reached, for measuring

    def make(self, index: int) -> tuple[Case, str]:
        rng = random.Random(f"{self.seed}/{GUIDED}/{index}")
        entries = [entry for entry in self.entry_names if self.kept[entry] or self.base.targets[entry].seeds]
        if entries and rng.random() < 0.5:
            case = self._mutated(rng, rng.choice(entries), index)
            name = GUIDED
        else:
            case, name = self.base.make(index)
        self.last_arcs = self.coverage.arcs(case)
        new = self.last_arcs - self.reached
        if new:
            self.reached |= new
            self.kept[case.fn].append(dict(case.fields))
        return case, name

    def _literal(self, rng: random.Random) -> str:
        """A value to splice: most often one the reference never spells."""
        return rng.choice(self.twin_only if self.twin_only and rng.random() < TWIN_ONLY_SHARE else self.literals)

    def _mutated(self, rng: random.Random, entry: str, index: int) -> Case:
        kept, target = self.kept[entry], self.base.targets[entry]
        if kept and (not target.seeds or rng.random() < KEPT_SHARE):  # an input that reached new arcs, the newest first
            parent = kept[-1 - rng.randrange(min(RECENT, len(kept)))] if rng.random() < 0.7 else rng.choice(kept)
        else:  # or a corpus case: what the corpus reaches, one value the code compares against further
            parent = dict(rng.choice(target.seeds))
        pool: list[Mapping[str, Any]] = [*kept] if kept else list(target.seeds)
        first = target.entry.args[0]
        fields = dict(parent)
        for _ in range(rng.randint(1, 3)):
            if isinstance(fields[first], str) and self.literals and rng.random() < 0.5:
                fields[first] = spliced_in(rng, fields[first], self._literal(rng))
            else:
                others = tuple(pool[rng.randrange(len(pool))] for _ in range(2))
                edit = BUILTIN[rng.choice(MUTATORS)]
                fields.update(edit(rng, FuzzTarget(entry, target.entry, (fields, *others), target.dictionary,
                                                   target.unseen)))
        for arg in target.entry.args[1:]:
            if isinstance(fields[arg], list) and fields[arg] and rng.random() < NARROW_SHARE:
                fields[arg] = [item for item in fields[arg] if rng.random() < 0.5]
        return Case(id=f"fuzz-{self.seed}-{index}", fn=entry, fields={arg: fields[arg] for arg in target.entry.args},
                    expect=PARITY_ONLY, tags=(FUZZ_TAG,),
                    why=f"case {index} of `extparity fuzz --guided --seed {self.seed}` (guided)",
                    file="fuzz", line=0, group=f"fuzz/{GUIDED}")


def reference_literals(files: frozenset[str]) -> frozenset[str]:
    """The string constants of the reference's files, and the characters its hex numbers name
    (``0x7B``, as the twin writes a code it compares with ``charCodeAt``)."""
    found: set[str] = set()
    for path in sorted(files):
        source = Path(path).read_text(encoding="utf-8")
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type == tokenize.STRING:
                try:
                    value = ast.literal_eval(token.string)
                except (ValueError, SyntaxError):  # an f-string's parts
                    continue
                if isinstance(value, str):
                    found.add(value)
            elif token.type == tokenize.NUMBER and token.string.lower().startswith("0x"):
                code = int(token.string.replace("_", ""), 16)
                if code < 0x110000:
                    found.add(chr(code))
    return frozenset(found)


def twin_only(literals: tuple[str, ...], reference: frozenset[str]) -> tuple[str, ...]:
    """The twin's literals that no constant of the reference holds, sorted as given."""
    return tuple(value for value in literals if not any(value in known for known in reference))


def guided_factory(project: Project, base: CaseFactory, corpus: dict[str, list[Case]]) -> GuidedFactory:
    """The reference's coverage and the splice dictionary ``base`` read, around ``base``."""
    return GuidedFactory(base, ReferenceCoverage(project), base.dictionary.words, corpus)
