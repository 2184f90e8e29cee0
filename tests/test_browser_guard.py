"""The tiers' guard (support/browser_guard.py) sees a browser process start below the test that
started it, and fails an unmarked test for it. The browsers here are real processes of a copied
executable named otherwise, so the guard of this very session does not take them for browsers."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from support import ROOT
from support.browser_guard import BrowserWatch

pytest_plugins = ["pytester"]

NAME = "fake-browser"


@pytest.fixture
def fake_browser(tmp_path):
    """bash under the name NAME: ``FAKE -c "sleep S; :"`` lives S seconds (the ``:`` keeps bash from
    exec'ing sleep, which would change the process's executable)."""
    path = tmp_path / NAME
    shutil.copy(shutil.which("bash"), path)
    return str(path)


def test_a_browser_process_started_during_a_test_is_named_and_one_already_running_is_not(fake_browser):
    watch = BrowserWatch(frozenset({NAME}))
    running = subprocess.Popen([fake_browser, "-c", "sleep 5; :"])
    try:
        watch.begin()
        subprocess.run([fake_browser, "-c", "sleep 0.5; :"], check=True)
        subprocess.run(["bash", "-c", "sleep 0.5; :"], check=True)  # no browser by its name
        started = watch.end()
    finally:
        running.kill()
        running.wait()
        watch.stop()
    assert len(started) == 1 and started[0].startswith(f"{NAME} (pid ") and started[0].endswith(": -c sleep 0.5; :")


def test_a_version_probe_is_not_a_launch(fake_browser):
    watch = BrowserWatch(frozenset({NAME}))
    watch.begin()
    subprocess.run([fake_browser, "-c", "sleep 0.5; :", "--version"], check=True)
    started = watch.end()
    watch.stop()
    assert started == []


@pytest.mark.slow
def test_a_test_that_starts_a_browser_errors_unless_it_is_marked(pytester, fake_browser, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(ROOT / "tests"), *sys.path]))
    pytester.makeconftest(f"""
        import support.browser_guard as guard

        guard.WATCH.names = frozenset({{{NAME!r}}})
    """)
    pytester.makepyfile(f"""
        import subprocess

        import pytest

        def test_unmarked():
            subprocess.run([{fake_browser!r}, "-c", "sleep 0.5; :"], check=True)

        @pytest.mark.browser
        def test_marked():
            subprocess.run([{fake_browser!r}, "-c", "sleep 0.5; :"], check=True)

        def test_without_a_browser():
            subprocess.run(["bash", "-c", "sleep 0.5; :"], check=True)
    """)
    result = pytester.runpytest_subprocess("-p", "support.browser_guard", "-p", "no:cacheprovider", "-W", "ignore")
    result.assert_outcomes(passed=3, errors=1)
    result.stdout.fnmatch_lines([f"*test_unmarked started a browser without the browser marker*: {NAME} (pid *"])
