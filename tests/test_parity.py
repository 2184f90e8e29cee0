"""The bundled corpus through every configured engine, as one pytest test per (engine, case).

Engines come from the config's registry, as they do for `extparity run`. Each engine runs the
whole corpus once per session (batched, with the same driver `extparity run` uses); the tests
then read its verdicts. Ids read `test_case[firefox-narration-refusal-...]`, so `pytest -k
firefox` or `-k narration` selects what a user expects. pytest-playwright's `--browser` option
picks which browser kinds run (default: all). A browser that is missing or fails to start
makes its tests fail, never skip.
"""

from __future__ import annotations

import pytest

from extparity.corpus import expect
from extparity.corpus.cases import PARITY_ONLY, load_corpus
from extparity.corpus.deviations import load_deviations
from extparity.engines.driver import run_engine
from extparity.project.config import load_project
from extparity.project.kinds import IN_BROWSER, KINDS, build_engine
from extparity.run.parity import background_hashes, disk_hashes, expected_hashes

PROJECT = load_project()
CORPUS = load_corpus(PROJECT.corpus, PROJECT.entries, base=PROJECT.root)
BROWSER_KINDS = tuple(name for name, kind in KINDS.items() if kind.runs == IN_BROWSER)  # as --browser names them
DEVIATIONS, DEVIATION_PROBLEMS = load_deviations(PROJECT.known_deviations, PROJECT.engines,
                                                 {case.id for case in CORPUS.cases})


def selected_engines(config) -> list[str]:
    browsers = config.getoption("browser", default=None) or list(BROWSER_KINDS)
    unknown = [b for b in browsers if b not in BROWSER_KINDS]
    if unknown:
        raise pytest.UsageError(f"--browser {', '.join(unknown)}: this suite has {' and '.join(BROWSER_KINDS)} engines")
    return [name for name, spec in PROJECT.engines.items() if spec.kind not in BROWSER_KINDS or spec.kind in browsers]


def pytest_generate_tests(metafunc):
    engines = selected_engines(metafunc.config)
    if "case" in metafunc.fixturenames:
        pairs = [(engine, case) for engine in engines for case in CORPUS.cases]
        metafunc.parametrize(("engine", "case"), pairs, ids=[f"{e}-{c.id}" for e, c in pairs])
    elif "tree_engine" in metafunc.fixturenames:
        metafunc.parametrize("tree_engine", [e for e in engines if PROJECT.engines[e].tree])
    elif "engine" in metafunc.fixturenames:
        metafunc.parametrize("engine", engines)


@pytest.fixture(scope="session")
def engine_run():
    """Runs an engine over the whole corpus the first time it is asked for, then remembers."""
    runs = {}

    def get(name):
        if name not in runs:
            engine = build_engine(PROJECT.engines[name], PROJECT)
            runs[name] = run_engine(engine, [case.wire(PROJECT.entries[case.fn]) for case in CORPUS.cases],
                                    budget_s=900)
        return runs[name]

    return get


def test_corpus_loads_without_problems():
    assert [str(p) for p in CORPUS.problems] == []
    assert len(CORPUS.cases) > 0


def test_known_deviations_file_is_well_formed():
    assert DEVIATION_PROBLEMS == []


def test_engine_ran_every_case(engine, engine_run):
    run = engine_run(engine)
    assert run.status == "ok", f"{engine} {run.status}: {run.detail}"
    assert len(run.verdicts) + len(run.failures) == len(CORPUS.cases)


def test_modules_loaded_are_the_bytes_on_disk(tree_engine, engine_run):
    """Through modules: the modules the entries reach; through messages: what the background loads."""
    hashes, problems = disk_hashes(PROJECT)
    background, background_problems = background_hashes(PROJECT, list(PROJECT.trees))
    assert problems == background_problems == []
    assert engine_run(tree_engine).module_hashes == expected_hashes(PROJECT, tree_engine, hashes, background)


def test_case(engine, case, engine_run, request):
    known = DEVIATIONS.get(case.id)
    if known and engine in known.engines:
        request.applymarker(pytest.mark.xfail(strict=True, reason=f"{known.reason} ({known.link})"))
    run = engine_run(engine)
    failure = run.failures.get(case.id)
    assert failure is None, f"{failure.kind}: {failure.detail}"
    verdict = run.verdicts.get(case.id)
    assert verdict is not None, f"no verdict ({run.status}: {run.detail})"
    if PROJECT.reference and engine != PROJECT.reference:
        assert verdict == engine_run(PROJECT.reference).verdicts.get(case.id), f"{engine} diverges from {PROJECT.reference}"
    if case.expect != PARITY_ONLY:
        assert expect.mismatches(PROJECT.entries[case.fn].list_items, case.expect, verdict) == [], \
            f"{case.file}:{case.line}: {case.why}"
