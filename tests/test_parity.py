"""The bundled corpus through every engine, as one pytest test per (engine, case).

Each engine runs the whole corpus once per session (batched, as `extparity run` does); the
tests then read its verdicts. Ids read `test_case[firefox-narration-refusal-...]`, so
`pytest -k firefox` or `-k narration` selects what a user expects. pytest-playwright's
`--browser` option picks the browser engines (default: both). A browser that is missing or
fails to start makes its tests fail, never skip.
"""

from __future__ import annotations

import pytest

from extparity import expect
from extparity.config import load_config
from extparity.corpus import load_corpus
from extparity.runner import REFERENCE, build_engine, disk_hashes, engine_tree, load_deviations

CONFIG = load_config()
CORPUS = load_corpus(CONFIG.corpus, base=CONFIG.root)
BROWSER_ENGINES = {"chromium": "chromium", "firefox": "firefox"}  # --browser value -> engine
JS_ENGINES = ("quickjs-chrome", "quickjs-firefox", "chromium", "firefox")
DEVIATIONS, DEVIATION_PROBLEMS = load_deviations(CONFIG.known_deviations)


def selected_engines(config) -> list[str]:
    browsers = config.getoption("browser", default=None) or list(BROWSER_ENGINES)
    unknown = [b for b in browsers if b not in BROWSER_ENGINES]
    if unknown:
        raise pytest.UsageError(f"--browser {', '.join(unknown)}: this suite has chromium and firefox engines")
    return ["python", "quickjs-chrome", "quickjs-firefox", *(BROWSER_ENGINES[b] for b in browsers)]


def pytest_generate_tests(metafunc):
    engines = selected_engines(metafunc.config)
    if "case" in metafunc.fixturenames:
        pairs = [(engine, case) for engine in engines for case in CORPUS.cases]
        metafunc.parametrize(("engine", "case"), pairs, ids=[f"{e}-{c.id}" for e, c in pairs])
    elif "js_engine" in metafunc.fixturenames:
        metafunc.parametrize("js_engine", [e for e in engines if e in JS_ENGINES])
    elif "engine" in metafunc.fixturenames:
        metafunc.parametrize("engine", engines)


@pytest.fixture(scope="session")
def engine_run():
    """Runs an engine over the whole corpus the first time it is asked for, then remembers."""
    runs = {}

    def get(name):
        if name not in runs:
            runs[name] = build_engine(name, CONFIG).run([case.wire() for case in CORPUS.cases], timeout_s=600)
        return runs[name]

    return get


def test_corpus_loads_without_problems():
    assert [str(p) for p in CORPUS.problems] == []
    assert len(CORPUS.cases) > 0


def test_known_deviations_file_is_well_formed():
    assert DEVIATION_PROBLEMS == []
    unknown = [case for case in DEVIATIONS if case not in {c.id for c in CORPUS.cases}]
    assert unknown == [], "known deviations name cases the corpus does not have"


def test_engine_ran_every_case(engine, engine_run):
    run = engine_run(engine)
    assert run.status == "ok", f"{engine} {run.status}: {run.detail}"
    assert len(run.verdicts) + len(run.case_errors) == len(CORPUS.cases)


def test_modules_loaded_are_the_bytes_on_disk(js_engine, engine_run):
    tree = engine_tree(js_engine)
    on_disk = {module: by_tree[tree] for module, by_tree in disk_hashes(CONFIG, [tree]).items()}
    assert engine_run(js_engine).module_hashes == on_disk


def test_case(engine, case, engine_run, request):
    known = DEVIATIONS.get(case.id)
    if known and engine in known.engines:
        request.applymarker(pytest.mark.xfail(strict=True, reason=f"{known.reason} ({known.link})"))
    run = engine_run(engine)
    assert case.id not in run.case_errors, f"threw: {run.case_errors.get(case.id)}"
    verdict = run.verdicts.get(case.id)
    assert verdict is not None, f"no verdict ({run.status}: {run.detail})"
    if engine != REFERENCE:
        assert verdict == engine_run(REFERENCE).verdicts.get(case.id), f"{engine} diverges from {REFERENCE}"
    assert expect.mismatches(case.fn, case.expect, verdict) == [], f"{case.file}:{case.line}: {case.why}"
