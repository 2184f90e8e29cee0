"""The bundled corpus through every configured engine, through extparity's own pytest plugin.

`extparity = true` in this repository's `[tool.pytest.ini_options]` makes `pytest` collect
`pyproject.toml::ENGINE::CASE` for every engine and case, and the run-level checks
(`pyproject.toml::modules`, `::corpus`, `::known-deviations`, `::engine[NAME]`), all judged by
one `extparity run` of the session (see README "The pytest plugin"). So `pytest -k firefox`,
`pytest -k narration` and `pytest pyproject.toml --extparity-engines python,chromium` select
what a user expects, and a browser that is missing fails its items, never skips them.

This module adds what only a test in this repository can check with the plugin's fixtures:
that the reference's worker process hands back the very bytes the reference returns here.
"""

from __future__ import annotations

import pytest

import toolcalls

REFERENCE = {"parse": toolcalls.parse_tool_calls_canonical, "repair": toolcalls.repair_arguments_canonical}


<<<<<<< HEAD
def test_the_reference_worker_returns_the_bytes_the_reference_returns_in_this_process(extparity_project,
                                                                                     extparity_result):
    if "python" not in extparity_result["engines"]:
        pytest.skip("the python engine is not among --extparity-engines")
    entries = extparity_project.entries
    differing = []
    for case in extparity_result["cases"]:
        given = case.get("divergent", {}).get("python", case.get("verdict"))
        here = REFERENCE[case["fn"]](*(case["args"][name] for name in entries[case["fn"]].args))
        if "python" in case.get("without_verdict", ()) or given != here:
            differing.append(case["id"])
    assert extparity_result["cases"] and differing == []
=======
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
    background, _, background_problems = background_hashes(PROJECT, list(PROJECT.trees))
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
>>>>>>> 1c65359 (Background: an import() inside a function is followed for identity but not required to load at start-up; the message that a browser did not load a script says what loads it)
