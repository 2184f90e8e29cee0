"""Every JS engine kind against a fake extension whose answers are known exactly.

Each kind (QuickJS, V8, SpiderMonkey, Chromium, Firefox) runs the same cases through the same
driver `extparity run` uses: awkward strings across every bridge, in-engine hashes, a case that
throws, a case that hangs, a module that throws at import, a missing export. Browser tests fail
(never skip) when a browser is missing: a parity gate that silently drops an engine would pass
for the wrong reason.
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest

from extparity.engines.base import WireCase
from extparity.engines.driver import run_engine
from extparity.project.kinds import build_engine

from support.fake_extension import MODULES, PARSER, make_tree, sha256, write_project

BROWSER_KINDS = [pytest.param(kind, marks=pytest.mark.browser) for kind in ("chromium", "firefox")]
KINDS = ["quickjs", "v8", "spidermonkey", *BROWSER_KINDS]
FLAVOR = {"quickjs": "chrome", "v8": "chrome", "spidermonkey": "firefox", "chromium": "chrome", "firefox": "firefox"}


def parse(case_id: str, text: str, allowed=()) -> WireCase:
    return WireCase(case_id, "parse", (text, list(allowed)))


def repair(case_id: str, raw: str) -> WireCase:
    return WireCase(case_id, "repair", (raw,))


def spec_quoted(text: str) -> str:
    """SPEC.md section 3's escaping of a string, unit by unit, as a Python string (a surrogate
    pair as its code point, which is how json.loads hands back the pair an engine wrote)."""
    data = text.encode("utf-16-le", "surrogatepass")
    units = [int.from_bytes(data[k:k + 2], "little") for k in range(0, len(data), 2)]
    short = {0x08: "\\b", 0x09: "\\t", 0x0A: "\\n", 0x0C: "\\f", 0x0D: "\\r", 0x22: '\\"', 0x5C: "\\\\"}
    out, k = ['"'], 0
    while k < len(units):
        unit = units[k]
        if 0xD800 <= unit <= 0xDBFF and k + 1 < len(units) and 0xDC00 <= units[k + 1] <= 0xDFFF:
            out.append(chr(0x10000 + ((unit - 0xD800) << 10) + (units[k + 1] - 0xDC00)))
            k += 2
            continue
        out.append(short.get(unit) or (f"\\u{unit:04x}" if unit < 0x20 or 0xD800 <= unit <= 0xDFFF else chr(unit)))
        k += 1
    return "".join(out) + '"'


# Every UTF-16 unit in order (U+DBFF U+DC00 among them, the one pair), then each surrogate alone
# between letters and a pair the wrong way round: the subject's canonical writer leaves strings
# to the engine's JSON.stringify, so every engine must escape them as SPEC.md section 3 says.
EVERY_UNIT = "".join(map(chr, range(0x10000))) + "a\ud800b\udfffc\ude00\ud83dd"

# Inputs that break naive bridges: lone surrogate, NUL, U+2028, an astral char (2 code units).
CASES = [
    parse("lone-surrogate", "a\ud800b", ["f"]),
    parse("nul", "a\x00b"),
    parse("u2028", "a\u2028b\u2029"),
    parse("astral", "\U0001d11e"),
    repair("repair-astral", "x\U0001d11e"),
    repair("repair-empty", ""),
    parse("throws", "THROW"),
    repair("__proto__", "abc"),
    parse("every-unit", EVERY_UNIT),
]
EXPECTED = {
    # JSON.stringify escapes lone surrogates and NUL, keeps U+2028 and astral chars raw.
    "lone-surrogate": '{"calls":[],"echo":"a\\ud800b"}',
    "nul": '{"calls":[],"echo":"a\\u0000b"}',
    "u2028": '{"calls":[],"echo":"a\u2028b\u2029"}',
    "astral": '{"calls":[],"echo":"\U0001d11e"}',
    "repair-astral": "3",  # UTF-16 length
    "repair-empty": "0",
    "__proto__": "3",
    "every-unit": '{"calls":[],"echo":' + spec_quoted(EVERY_UNIT) + "}",
}


def engine_for(tmp_path, kind: str, files: dict[str, str] | None = None, chunk_size: int = 3, gate: dict | None = None,
               **options):
    """An engine of ``kind`` on a fake tree; ``gate``: the project's [tool.extparity.gate] table."""
    tree = make_tree(tmp_path / "tree", FLAVOR[kind], files)
    project = write_project(tmp_path, {"t": tree}, {"e": {"kind": kind, "tree": "t", "chunk_size": chunk_size, **options}},
                            **({"gate": gate} if gate else {}))
    return build_engine(project.engines["e"], project), tree


@pytest.fixture(scope="module", params=KINDS)
def engine_runs(request, tmp_path_factory):
    """Per kind: the run over CASES on tree A, and a run on tree B whose parser differs by a comment."""
    kind = request.param
    engine_a, tree_a = engine_for(tmp_path_factory.mktemp(f"{kind}-a"), kind)
    engine_b, tree_b = engine_for(tmp_path_factory.mktemp(f"{kind}-b"), kind,
                                  {"src/agent/tool-call-parser.js": PARSER + "// changed\n"})
    return kind, tree_a, run_engine(engine_a, CASES), tree_b, run_engine(engine_b, CASES[:1])


def test_verdicts_survive_every_bridge(engine_runs):
    kind, _, run, _, _ = engine_runs
    assert run.status == "ok", f"{kind}: {run.detail}"
    assert run.verdicts == EXPECTED


def test_a_throwing_case_is_a_case_error_and_others_still_run(engine_runs):
    _, _, run, _, _ = engine_runs
    assert {case_id: (f.kind, f.detail) for case_id, f in run.failures.items()} == \
        {"throws": ("error", "RangeError: asked to throw")}
    assert len(run.verdicts) == len(CASES) - 1


def test_in_engine_hashes_equal_on_disk_hashes_of_every_module_the_entries_reach(engine_runs):
    _, tree_a, run_a, tree_b, run_b = engine_runs
    assert run_a.module_hashes == {path: sha256(tree_a / path) for path in MODULES}
    assert run_b.module_hashes == {path: sha256(tree_b / path) for path in MODULES}


def test_a_module_that_differs_between_trees_has_different_hashes(engine_runs):
    _, _, run_a, _, run_b = engine_runs
    changed = "src/agent/tool-call-parser.js"
    assert run_a.module_hashes[changed] != run_b.module_hashes[changed]
    assert {k: v for k, v in run_a.module_hashes.items() if k != changed} == \
        {k: v for k, v in run_b.module_hashes.items() if k != changed}


def test_timings_are_reported(engine_runs):
    _, _, run, _, _ = engine_runs
    assert run.timings["startup_s"] > 0 and run.timings["sessions"] == 1
    assert len(run.timings["chunks_s"]) == 3  # 9 cases in chunks of 3


# Each waits out the case's time-out (SpiderMonkey's is a kill and a new worker: about 20 s).
@pytest.mark.parametrize("kind", [*(pytest.param(kind, marks=pytest.mark.slow) for kind in ("quickjs", "v8", "spidermonkey")),
                                  *BROWSER_KINDS])
def test_a_hanging_case_is_a_timeout_naming_it_and_the_rest_of_its_chunk_still_runs(kind, tmp_path):
    engine, _ = engine_for(tmp_path, kind)
    cases = [repair(f"ok{i}", "x" * i) for i in range(4)] + [parse("loop", "LOOP"), repair("after", "")]
    started = time.perf_counter()
    run = run_engine(engine, cases, case_timeout_s=2)  # chunks: ok0-2, ok3+loop+after
    assert run.status == "ok", run.detail
    assert run.verdicts == {**{f"ok{i}": str(i) for i in range(4)}, "after": "0"}
    assert list(run.failures) == ["loop"] and run.failures["loop"].kind == "timeout"
    assert time.perf_counter() - started < 150  # a guard against hanging, not a speed test


@pytest.mark.parametrize("kind", KINDS)
def test_a_module_that_throws_at_import_is_one_engine_failure_naming_it(kind, tmp_path):
    engine, _ = engine_for(tmp_path, kind, {"src/agent/json-core.js": 'throw new Error("boom at import");\n' + MODULES["src/agent/json-core.js"]})
    run = run_engine(engine, CASES)
    assert run.status == "crashed"
    assert "boom at import" in run.detail and "json-core.js" in run.detail
    assert run.verdicts == {} and run.failures == {}
    assert run.timings["sessions"] == 0


@pytest.mark.parametrize("kind", KINDS)
def test_a_missing_export_is_one_engine_failure_naming_it(kind, tmp_path):
    engine, _ = engine_for(tmp_path, kind, {"src/agent/argument-repair.js": MODULES["src/agent/argument-repair.js"]
                                            .replace("repairArgumentsCanonical", "repairArgs")})
    started = time.perf_counter()
    run = run_engine(engine, CASES)
    assert run.status == "crashed"
    assert "has no exported function repairArgumentsCanonical" in run.detail
    assert time.perf_counter() - started < 30


@pytest.mark.parametrize("kind", ["chromium", "firefox"])
def test_a_missing_browser_is_a_crash_not_a_skip(kind, tmp_path):
    engine, _ = engine_for(tmp_path, kind, executable=str(tmp_path / "no-such-browser"))
    run = run_engine(engine, CASES)
    assert run.status == "crashed" and "browser not found" in run.detail


@pytest.mark.parametrize("kind, key, pattern", [("v8", "v8", r"\d+\.\d+\.\d+\.\d+"),
                                               ("spidermonkey", "spidermonkey", r"libmozjs-\w+\.so")])
def test_the_exact_version_only_the_worker_knows_reaches_the_engines_versions(kind, key, pattern, tmp_path):
    engine, _ = engine_for(tmp_path, kind)
    run = run_engine(engine, CASES[:1])
    assert run.status == "ok", run.detail
    assert re.fullmatch(pattern, str(run.description.get(key))), run.description


def test_quickjs_evaluates_modules_as_modules(tmp_path):
    """Strict mode and an undefined top-level `this`, as in a browser's module loader."""
    parser = PARSER.replace("export function", "const probe = [this === undefined, (function () { return this; })() === undefined];\nexport function")
    parser = parser.replace("canon({ calls: [], echo: text })", "canon(probe)")
    engine, _ = engine_for(tmp_path, "quickjs", {"src/agent/tool-call-parser.js": parser})
    run = run_engine(engine, CASES[:1])
    assert run.status == "ok", run.detail
    assert run.verdicts == {"lone-surrogate": "[true,true]"}


@pytest.mark.parametrize("kind", ["quickjs", "v8", "spidermonkey"])
def test_headless_workers_run_below_the_browsers_priority(kind, tmp_path):
    """Browsers' start-up is a run's critical path: workers yield the CPU to it, through their
    nice value and, where Linux groups scheduling by session, their session's group."""
    from extparity.engines.worker import NICENESS

    engine, _ = engine_for(tmp_path, kind)
    session = engine.open()
    try:
        pid = session._proc.pid
        assert os.getpriority(os.PRIO_PROCESS, pid) == os.getpriority(os.PRIO_PROCESS, 0) + NICENESS
        autogroup = Path(f"/proc/{pid}/autogroup")
        if Path("/proc/sys/kernel/sched_autogroup_enabled").read_text().strip() == "1":
            assert autogroup.read_text().split()[-1] == str(NICENESS)
    finally:
        session.close()


@pytest.mark.parametrize("kind", ["v8", "spidermonkey"])
def test_headless_engines_see_no_host_globals(kind, tmp_path):
    """A bare engine: no console, timers or URL from the binding, so code that leans on them fails here."""
    parser = PARSER.replace('if (text === "THROW")', 'if (text === "GLOBALS") return canon([typeof console, typeof setTimeout, typeof URL]);\n  if (text === "THROW")')
    engine, _ = engine_for(tmp_path, kind, {"src/agent/tool-call-parser.js": parser})
    run = run_engine(engine, [parse("globals", "GLOBALS")])
    assert run.verdicts == {"globals": '["undefined","undefined","undefined"]'}, run.detail


# ------------------------------------------------------------------ start-up problems, in the browser's words

THROWING_BACKGROUND = 'throw new Error("background boom");\n'
STARTUP_FAILURES = [
    # (kind, files or None for a folder without a manifest, manifest changes, words the failure must carry);
    # Firefox refuses a tree without a manifest before it starts, the others start a browser.
    pytest.param("chromium", None, {}, "Manifest file is missing or unreadable", marks=pytest.mark.browser),
    ("firefox", None, {}, "tree/manifest.json: missing"),
    pytest.param("chromium", {"background.js": THROWING_BACKGROUND}, {}, "Uncaught Error: background boom",
                 marks=pytest.mark.browser),
    pytest.param("firefox", {"background.js": THROWING_BACKGROUND}, {}, "Error: background boom", marks=pytest.mark.browser),
    pytest.param("chromium", {}, {"manifest_version": 2}, "unsupported manifest version", marks=pytest.mark.browser),
]


@pytest.mark.parametrize(("kind", "files", "changes", "words"), STARTUP_FAILURES,
                         ids=["chromium-no-manifest", "firefox-no-manifest", "chromium-background-throws",
                              "firefox-background-throws", "chromium-mv2"])
def test_a_start_up_problem_is_reported_within_seconds_in_the_browsers_words(kind, files, changes, words, tmp_path):
    from support.fake_extension import manifest

    tree = tmp_path / "tree"
    if files is None:
        make_tree(tree, FLAVOR[kind]).joinpath("manifest.json").unlink()
    else:
        make_tree(tree, FLAVOR[kind], files, {**manifest(FLAVOR[kind]), **changes})
    project = write_project(tmp_path, {"t": tree}, {"e": {"kind": kind, "tree": "t"}})
    started = time.perf_counter()
    run = run_engine(build_engine(project.engines["e"], project), CASES[:2])
    assert run.status == "crashed"
    assert words in run.detail
    assert time.perf_counter() - started < 20


@pytest.mark.browser
def test_chromium_applies_the_extension_csp_to_the_subject(tmp_path):
    """Code evaluated through CDP may eval; the subject's code must not, as in the real page (with
    `eval` allowed by a purity exception, so that the guard leaves it to the CSP)."""
    parser = PARSER.replace('if (text === "THROW")', 'if (text === "EVAL") return canon(eval("1 + 1"));\n  if (text === "THROW")')
    engine, _ = engine_for(tmp_path, "chromium", {"src/agent/tool-call-parser.js": parser},
                           gate={"purity": [{"identifier": "eval", "module": "src/agent/tool-call-parser.js",
                                             "reason": "the CSP is under test"}]})
    run = run_engine(engine, [parse("eval", "EVAL")])
    assert run.status == "ok", run.detail
    assert run.failures["eval"].kind == "error" and run.failures["eval"].detail.startswith("EvalError")


@pytest.mark.browser
@pytest.mark.parametrize("kind", ["chromium"])
def test_navigator_webdriver_is_false_where_the_browser_allows_it(kind, tmp_path):
    parser = PARSER.replace('if (text === "THROW")', 'if (text === "WEBDRIVER") return canon(navigator.webdriver);\n  if (text === "THROW")')
    engine, _ = engine_for(tmp_path, kind, {"src/agent/tool-call-parser.js": parser})
    run = run_engine(engine, [parse("webdriver", "WEBDRIVER")])
    assert run.verdicts == {"webdriver": "false"}, run.detail


@pytest.mark.browser
def test_firefox_over_webdriver_bidi_still_shows_navigator_webdriver_to_the_subject(tmp_path):
    """Documented in docs/message-path.md: no Firefox pref makes it false over BiDi (dom.webdriver.enabled,
    marionette.enabled and remote.active-protocols were tried); only RDP-only launches have it
    false. If this starts failing, Firefox changed, and docs/message-path.md must say so."""
    parser = PARSER.replace('if (text === "THROW")', 'if (text === "WEBDRIVER") return canon(navigator.webdriver);\n  if (text === "THROW")')
    engine, _ = engine_for(tmp_path, "firefox", {"src/agent/tool-call-parser.js": parser})
    run = run_engine(engine, [parse("webdriver", "WEBDRIVER")])
    assert run.verdicts == {"webdriver": "true"}, run.detail


def test_a_tree_that_is_not_a_folder_is_a_config_error_before_anything_starts(tmp_path):
    from extparity.project.errors import ConfigError

    with pytest.raises(ConfigError, match=r"\[tool.extparity.trees\].t: .*/nowhere is not a folder"):
        write_project(tmp_path, {"t": tmp_path / "nowhere"}, {"e": {"kind": "chromium", "tree": "t"}})


@pytest.mark.browser
def test_chromium_started_elsewhere_is_reached_through_its_endpoint(tmp_path):
    """A browser grid's Chromium: started by someone else with the extension, reached over CDP."""
    import os
    import signal
    import subprocess

    tree = make_tree(tmp_path / "tree", "chrome")
    profile = tmp_path / "remote-profile"
    chromium = subprocess.Popen(
        ["/usr/bin/chromium", "--headless=new", "--remote-debugging-port=0", f"--user-data-dir={profile}", "--no-sandbox",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         f"--disable-extensions-except={tree}", f"--load-extension={tree}", "about:blank"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        port_file = profile / "DevToolsActivePort"
        deadline = time.monotonic() + 30
        while not (port_file.exists() and port_file.read_text().strip()) and time.monotonic() < deadline:
            time.sleep(0.05)
        endpoint = f"http://127.0.0.1:{port_file.read_text().split()[0]}"
        project = write_project(tmp_path, {"t": tree}, {"e": {"kind": "chromium", "tree": "t", "endpoint": endpoint,
                                                              "executable": "/nonexistent/chromium"}})
        run = run_engine(build_engine(project.engines["e"], project), CASES)
        assert run.status == "ok", run.detail
        assert run.verdicts == EXPECTED
        assert run.module_hashes == {path: sha256(tree / path) for path in MODULES}
        assert chromium.poll() is None, "the harness must not close a browser it did not start"
    finally:
        os.killpg(chromium.pid, signal.SIGKILL)
        chromium.wait()
