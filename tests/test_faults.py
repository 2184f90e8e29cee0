"""Faults and bad input, as a user's CI meets them: the harness never lies, never hangs, never
leaves a mess.

Each test injects one fault into a real run (a hanging or crashing case, SIGINT or SIGTERM in
the middle of a run, an unwritable or full output file, a broken config or input) and checks
what the user sees: the exit code, one line saying what happened, results that were already
there kept, and no process or temporary file left behind.
"""

from __future__ import annotations

import collections
import json
import os
import queue
import resource
import signal
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

from extparity.engines.base import WireCase
from extparity.engines.child import ChildSession
from extparity.engines.driver import MAX_RESTARTS, run_engine
from extparity.project.kinds import build_engine

from support.fake_extension import make_tree, write_project

EXTPARITY = [sys.executable, "-m", "extparity.cli"]
REFERENCE = '''\
import json, os


def parse(text, allowed):
    if text == "LOOP":
        while True:
            pass
    if text == "DIE":
        os._exit(3)
    return json.dumps({"calls": [], "echo": text}, separators=(",", ":"))


def repair(raw):
    return json.dumps(len(raw.encode("utf-16-le")) // 2)
'''
TAGS = {"fault": "a case written by test_faults"}


def case_line(case_id: str, text: str) -> dict:
    return {"id": case_id, "fn": "parse", "input": text, "allowed": [], "expect": "reference", "tags": ["fault"],
            "why": "fault injection"}


def project_with(tmp_path: Path, cases: list[dict], engines: dict, trees: dict | None = None, **extra):
    """A fake extension, a fake Python reference and a corpus, configured in tmp_path."""
    tree = make_tree(tmp_path / "tree", "chrome")
    (tmp_path / "ref").mkdir()
    (tmp_path / "ref" / "fakeref.py").write_text(REFERENCE)
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "tags.json").write_text(json.dumps(TAGS))
    (corpus / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    python = {"kind": "python", "path": "ref", "functions": {"parse": "fakeref:parse", "repair": "fakeref:repair"}}
    return write_project(tmp_path, {"chrome": tree, **(trees or {})}, {"python": python, **engines}, **extra)


def cli(*args: str, cwd: Path | None = None, env: dict | None = None, timeout: float = 120, **popen):
    return subprocess.run([*EXTPARITY, *args], capture_output=True, text=True, cwd=cwd, timeout=timeout,
                          env={**os.environ, **(env or {})}, **popen)


# ------------------------------------------------------------------ a case that hangs or crashes an engine

@pytest.mark.slow
def test_a_reference_case_that_hangs_or_kills_its_process_is_named_and_the_rest_of_its_chunk_runs(tmp_path):
    cases = [case_line("before", "a"), case_line("loop", "LOOP"), case_line("die", "DIE"), case_line("after", "b")]
    project = project_with(tmp_path, cases, {})
    wire = [WireCase(c["id"], "parse", (c["input"], [])) for c in cases]
    run = run_engine(build_engine(project.engines["python"], project), wire, case_timeout_s=2)
    assert run.status == "ok", run.detail
    assert sorted(run.verdicts) == ["after", "before"]
    assert run.failures["loop"].kind == "timeout" and "no verdict within 2s" in run.failures["loop"].detail
    assert run.failures["die"].kind == "crash" and "exited with code 3" in run.failures["die"].detail
    assert run.timings["restarts"] == 2


@pytest.mark.slow
def test_an_engine_that_keeps_crashing_gives_up_with_a_status_of_the_results_vocabulary(tmp_path):
    """Past MAX_RESTARTS the driver stops: the engine's status is "crashed", as the JSON result's
    schema spells it (it was the session's word, "crash", before)."""
    cases = [case_line(f"die-{i}", "DIE") for i in range(MAX_RESTARTS + 2)]
    project = project_with(tmp_path, cases, {})
    wire = [WireCase(c["id"], "parse", (c["input"], [])) for c in cases]
    run = run_engine(build_engine(project.engines["python"], project), wire, case_timeout_s=5)
    assert run.status == "crashed"
    assert run.detail.startswith(f"gave up after {MAX_RESTARTS} restarts; last: worker exited with code 3")


@pytest.mark.slow
def test_a_hanging_case_is_a_timeout_cell_in_the_report_and_names_the_case(tmp_path):
    project = project_with(tmp_path, [case_line("fine", "a"), case_line("loop", "LOOP")], {"qjs": {"kind": "quickjs", "tree": "chrome"}})
    result = cli("--config", str(project.path), "run", "--case-timeout", "2", "--json", str(tmp_path / "r.json"))
    cells = {c["id"]: c["cells"] for c in json.loads((tmp_path / "r.json").read_text())["cases"]}
    assert result.returncode == 1
    assert cells == {"fine": {"python": "pass", "qjs": "pass"}, "loop": {"python": "timeout", "qjs": "timeout"}}
    assert "loop [qjs] TIMEOUT: stopped by QuickJS after 2s" in result.stderr


@pytest.mark.slow
def test_a_starved_worker_that_goes_a_poll_without_a_cpu_tick_is_not_taken_for_idle():
    """The CPU clock counts in ticks of 10 ms; a worker given a few percent of a core can go a
    whole poll (0.5 s) without one, and the wait once took that for a silent worker (CI saw it
    killed after 81 s, mid-case). Here a real process works 30 ms every 0.6 s and answers after
    4 s, past the wait's 1 s budget: it is working, so its line must arrive."""
    worker = subprocess.Popen([sys.executable, "-c", (
        "import time\n"
        "for _ in range(7):\n"
        "    end = time.process_time() + 0.03\n"
        "    while time.process_time() < end: pass\n"
        "    time.sleep(0.6)\n"
        "print('{\"done\": true}', flush=True)\n")], stdout=subprocess.PIPE, text=True)
    session = object.__new__(ChildSession)
    session._proc, session._answers, session._lines = worker, worker.stdout, queue.Queue()
    session._stderr = collections.deque()
    threading.Thread(target=session._read_stdout, daemon=True).start()
    try:
        assert session._next_on_cpu(1.0) == {"done": True}
    finally:
        worker.kill()
        worker.wait()


@pytest.mark.slow
def test_a_worker_that_stops_cases_by_its_own_cpu_clock_is_not_killed_early_on_a_starved_cpu(tmp_path):
    """QuickJS's time limit counts CPU seconds. Pinned to one core next to four busy loops, the
    worker gets about a fifth of it: the batch and the case alone take about 2 CPU seconds, 10
    wall seconds, past the 7 s a wall-clock wait gives it. It must still report the case it
    stopped, not be killed as silent."""
    project = project_with(tmp_path, [case_line("fine", "a"), case_line("loop", "LOOP")], {"qjs": {"kind": "quickjs", "tree": "chrome"}})
    on_one_core = {"preexec_fn": lambda: os.sched_setaffinity(0, {0})}
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"], **on_one_core) for _ in range(4)]
    try:
        result = cli("--config", str(project.path), "run", "--engines", "qjs", "--case-timeout", "1",
                     "--json", str(tmp_path / "r.json"), **on_one_core)
    finally:
        for process in busy:
            process.kill()
            process.wait()
    assert "loop [qjs] TIMEOUT: stopped by QuickJS after 1s" in result.stderr, result.stderr[-2000:]
    cells = {c["id"]: c["cells"] for c in json.loads((tmp_path / "r.json").read_text())["cases"]}
    assert cells["fine"]["qjs"] == "pass" and cells["loop"]["qjs"] == "timeout"


# ------------------------------------------------------------------ interrupts

def descendants(pid: int) -> set[int]:
    """Every live process below `pid` (from /proc: children, grandchildren, ...)."""
    parents = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            parents[int(entry.name)] = int(stat[stat.rindex(")") + 2:].split()[1])
    found, frontier = set(), {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def marked(mark: str) -> list[int]:
    """Live processes whose environment carries `mark`: every descendant of a run inherits it,
    even one started after the signal and orphaned since."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                if mark.encode() in (entry / "environ").read_bytes() and alive(int(entry.name)):
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return state[state.rindex(")") + 2] != "Z"


@pytest.fixture
def request_cleanup():
    folders = []
    yield folders.append
    for folder in folders:
        shutil.rmtree(folder, ignore_errors=True)


def interrupt_when(process: subprocess.Popen, ready, signum: int, limit_s: float = 90) -> set[int]:
    """Wait until `ready(descendant command lines)` holds, send `signum`, return the descendants."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        children = descendants(process.pid)
        commands = []
        for pid in children:
            try:
                commands.append(Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace"))
            except OSError:
                pass
        if ready(commands):
            time.sleep(0.1)
            children = descendants(process.pid)
            process.send_signal(signum)
            return children
        assert process.poll() is None, f"the run ended before the fault: {process.communicate()}"
        time.sleep(0.1)
    process.kill()
    raise AssertionError("the run never reached the phase to interrupt")


@pytest.mark.parametrize(("phase", "signum", "code", "word"), [
    ("a QuickJS worker stuck in a hanging case", signal.SIGINT, 130, "interrupted"),
    pytest.param("Chromium and Firefox starting", signal.SIGINT, 130, "interrupted", marks=pytest.mark.browser),
    pytest.param("Chromium and Firefox running", signal.SIGINT, 130, "interrupted", marks=pytest.mark.browser),
    pytest.param("Chromium and Firefox running", signal.SIGTERM, 143, "terminated", marks=pytest.mark.browser),
])
def test_an_interrupt_stops_every_child_removes_every_temporary_file_and_writes_no_report(tmp_path, request_cleanup, phase, signum, code, word):
    temp = Path(tempfile.mkdtemp(prefix="xp-", dir="/tmp"))  # short: Chromium's socket path has a limit
    request_cleanup(temp)
    trees = {}
    if phase.startswith("a QuickJS"):
        engines = {"qjs": {"kind": "quickjs", "tree": "chrome"}}
        cases = [case_line("fine", "a"), case_line("loop", "LOOP")]
        ready = lambda commands: sum("extparity.engines.worker" in c for c in commands) >= 2  # noqa: E731
    else:
        trees = {"fx": make_tree(tmp_path / "fx", "firefox")}
        engines = {"chromium": {"kind": "chromium", "tree": "chrome"}, "firefox": {"kind": "firefox", "tree": "fx"}}
        cases = [case_line(f"c{i}", f"text {i}") for i in range(20)]
        if phase.endswith("starting"):
            # a launched browser, not `chromium --version` (the engine asks that and it exits at once)
            ready = lambda commands: any("chromium" in c and "--user-data-dir" in c for c in commands)  # noqa: E731
        else:
            ready = lambda commands: any("chromium" in c and "--type=renderer" in c for c in commands) and \
                any("firefox" in c and "-contentproc" in c for c in commands)  # noqa: E731
    project = project_with(tmp_path, cases, engines, trees)
    report = tmp_path / "out" / "r.json"
    mark = f"EXTPARITY_FAULT_TEST={temp.name}"
    process = subprocess.Popen([*EXTPARITY, "--config", str(project.path), "run", "--case-timeout", "60", "--json", str(report)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env={**os.environ, "TMPDIR": str(temp), "EXTPARITY_FAULT_TEST": temp.name})
    children = interrupt_when(process, ready, signum)
    assert children, "nothing was running to be stopped"
    limit = 15 if phase.startswith("a QuickJS") else 40  # a starting Firefox finishes its launch first
    try:
        out, err = process.communicate(timeout=limit)
    except subprocess.TimeoutExpired:
        process.kill()
        raise AssertionError(f"the run did not stop within {limit} s of the signal")
    assert process.returncode == code, err
    last = err.strip().splitlines()[-1]
    assert last == f"extparity: {word}; every engine was stopped and no report was written"
    assert "Traceback" not in err
    deadline = time.monotonic() + 10
    while (marked(mark) or any(alive(pid) for pid in children)) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert [pid for pid in children if alive(pid)] == []
    assert marked(mark) == []
    assert not report.exists()
    assert sorted(p.name for p in temp.iterdir()) == []


@pytest.mark.browser
def test_a_finished_run_leaves_no_browser_process_and_no_temporary_file_behind(tmp_path, request_cleanup):
    """The browsers are killed, not closed gracefully, at the end of a run (faster by seconds):
    their processes, profiles and Playwright's own files must still all be gone."""
    temp = Path(tempfile.mkdtemp(prefix="xp-", dir="/tmp"))  # short: Chromium's socket path has a limit
    request_cleanup(temp)
    trees = {"fx": make_tree(tmp_path / "fx", "firefox")}
    engines = {"chromium": {"kind": "chromium", "tree": "chrome"}, "firefox": {"kind": "firefox", "tree": "fx"}}
    project = project_with(tmp_path, [case_line(f"c{i}", f"text {i}") for i in range(20)], engines, trees)
    mark = f"EXTPARITY_FAULT_TEST={temp.name}"
    result = cli("--config", str(project.path), "run", "--json", str(tmp_path / "r.json"),
                 env={"TMPDIR": str(temp), "EXTPARITY_FAULT_TEST": temp.name})
    assert result.returncode == 0, result.stderr
    summary = json.loads((tmp_path / "r.json").read_text())["summary"]
    assert [(row["engine"], row["cases"], row["status"]) for row in summary] == \
        [("python", 20, "ok"), ("chromium", 20, "ok"), ("firefox", 20, "ok")]
    deadline = time.monotonic() + 5
    while marked(mark) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert marked(mark) == []
    assert sorted(p.name for p in temp.iterdir()) == []


# ------------------------------------------------------------------ outputs

def test_an_unwritable_output_folder_is_a_usage_error_before_any_engine_starts(tmp_path):
    """/proc takes no new files, even from root: a read-only place as CI may meet one."""
    project = project_with(tmp_path, [case_line("fine", "a")], {})
    result = cli("--config", str(project.path), "run", "--json", "/proc/extparity-report.json")
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == ["extparity: /proc/extparity-report.json: not writable (No such file or directory)"]


def test_an_output_path_that_is_a_folder_is_a_usage_error_before_any_engine_starts(tmp_path):
    project = project_with(tmp_path, [case_line("fine", "a")], {})
    result = cli("--config", str(project.path), "run", "--matrix", str(tmp_path))
    assert result.returncode == 2
    assert result.stderr.strip() == f"extparity: {tmp_path}: is a directory, not a file"


def test_a_full_disk_leaves_the_previous_report_whole_and_says_so_in_one_line(tmp_path):
    project = project_with(tmp_path, [case_line(f"c{i}", "x" * 200) for i in range(50)], {})
    report = tmp_path / "r.json"
    report.write_text('{"previous": true}\n')

    def small_files():  # writes past 4 KiB fail with EFBIG, as on a full disk
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))

    result = cli("--config", str(project.path), "run", "--json", str(report), preexec_fn=small_files)
    assert result.returncode == 1
    assert f"cannot write {report}: File too large" in result.stderr
    assert "Traceback" not in result.stderr
    assert report.read_text() == '{"previous": true}\n'
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".r.json")] == []


# ------------------------------------------------------------------ bad config and input

def test_an_invalid_pyproject_found_by_searching_parent_folders_is_one_line_and_exit_2(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.extparity\ncorpus = [")
    (tmp_path / "sub").mkdir()
    result = cli("corpus", "lint", cwd=tmp_path / "sub")
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and result.stderr.startswith(f"extparity: {tmp_path / 'pyproject.toml'}: not valid TOML")


def test_a_text_file_that_is_not_utf8_is_one_line_and_exit_2(tmp_path):
    project = project_with(tmp_path, [case_line("fine", "a")], {})
    bad = tmp_path / "in.txt"
    bad.write_bytes(b"ok \xff no")
    result = cli("--config", str(project.path), "diff", "--text-file", str(bad), "--engines", "python")
    assert result.returncode == 2
    assert result.stderr.strip() == f"extparity: {bad}: not UTF-8 (byte 4 is 0xff)"


def test_a_corpus_line_that_is_not_utf8_names_its_file_and_line_and_the_rest_loads(tmp_path):
    project = project_with(tmp_path, [case_line("one", "a")], {})
    corpus = tmp_path / "corpus" / "cases.jsonl"
    corpus.write_bytes(corpus.read_bytes() + b'{"id": "bad\xfe"}\n' + (json.dumps(case_line("three", "c")) + "\n").encode())
    result = cli("--config", str(project.path), "corpus", "lint")
    assert result.returncode == 1
    assert "corpus/cases.jsonl:2: not UTF-8 (byte 12 of the line)" in result.stdout
    assert result.stdout.strip().endswith("2 cases in 1 file, 1 problem")


def test_a_module_that_throws_at_import_is_reported_once_for_the_engine_not_per_cell(tmp_path):
    project = project_with(tmp_path, [case_line(f"c{i}", str(i)) for i in range(31)], {"qjs": {"kind": "quickjs", "tree": "chrome"}})
    core = tmp_path / "tree" / "src/agent/json-core.js"
    core.write_text('throw new Error("broken at import");\n' + core.read_text())
    result = cli("--config", str(project.path), "run")
    assert result.returncode == 1
    failures = result.stderr.split("\nFAILED:\n")[1].strip().splitlines()
    assert len(failures) == 1
    assert failures[0].startswith("engine qjs: crashed: src/agent/json-core.js: module evaluation failed: Error: broken at import")
    assert failures[0].endswith("(31 cases without a verdict)")


def test_a_missing_binding_is_its_engine_failure_with_the_kind_install_hint_and_the_others_run(tmp_path):
    """The binding is imported by the worker's host only: the config loads, the other engines run,
    and the engine says what to install (its kind's ``INSTALL_HINT``). The binding is hidden by a
    package of its name first on the worker's PYTHONPATH that fails to import, as a missing one does."""
    project = project_with(tmp_path, [case_line("fine", "a")], {"qjs": {"kind": "quickjs", "tree": "chrome"}})
    hidden = tmp_path / "hidden" / "quickjs"
    hidden.mkdir(parents=True)
    (hidden / "__init__.py").write_text('raise ModuleNotFoundError("No module named \'quickjs\'")\n')
    path = os.pathsep.join(filter(None, [str(hidden.parent), os.environ.get("PYTHONPATH")]))
    result = cli("--config", str(project.path), "run", env={"PYTHONPATH": path})
    assert result.returncode == 1
    assert ("engine qjs: crashed: quickjs binding is not installed: No module named 'quickjs'; "
            "install it with: pip install quickjs-ng (1 case without a verdict)") in result.stderr, result.stderr
    assert "python: 1 verdict" in result.stderr


@pytest.mark.browser
def test_a_browser_that_dies_at_launch_is_reported_in_its_own_words(tmp_path):
    """A TMPDIR too long for Chromium's singleton socket: Chromium's FATAL line, not Playwright's."""
    project = project_with(tmp_path, [case_line("fine", "a")], {"chromium": {"kind": "chromium", "tree": "chrome"}})
    long_temp = tmp_path / ("t" * 60) / ("u" * 40)
    long_temp.mkdir(parents=True)
    result = cli("--config", str(project.path), "run", "--engines", "chromium", env={"TMPDIR": str(long_temp)})
    assert result.returncode == 1
    assert "engine chromium: crashed: launching Chromium:" in result.stderr
    assert "browser said: Socket path too long" in result.stderr
