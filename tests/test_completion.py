"""Shell completion (`extparity --print-completion bash|zsh|tcsh`, made by shtab from the parser):
the bash script, sourced in a real bash, completes subcommands and their options."""

from __future__ import annotations

import subprocess
import sys

import pytest


def complete(*words: str) -> list[str]:
    script = subprocess.run([sys.executable, "-m", "extparity.cli", "--print-completion", "bash"],
                            capture_output=True, text=True, timeout=60)
    assert script.returncode == 0, script.stderr
    line = " ".join(words)
    done = subprocess.run(["bash", "--norc", "-c", f'source /dev/stdin; COMP_WORDS=({line}); COMP_CWORD={len(words) - 1}; '
                           f'COMP_LINE="{line}"; COMP_POINT=${{#COMP_LINE}}; _shtab_extparity; printf "%s\\n" "${{COMPREPLY[@]}}"'],
                          input=script.stdout, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return sorted(set(done.stdout.split()))


def test_bash_completes_subcommands():
    assert complete("extparity", "ga") == ["gate"]
    assert {"run", "gate", "merge", "report", "diff"} <= set(complete("extparity", ""))


def test_bash_completes_a_subcommands_options():
    assert {"--results", "--json", "--allow-stale"} <= set(complete("extparity", "gate", "--"))
    assert complete("extparity", "run", "--sh") == ["--shard"]


@pytest.mark.parametrize("shell", ["zsh", "tcsh"])
def test_other_shells_get_a_script_too(shell):
    done = subprocess.run([sys.executable, "-m", "extparity.cli", "--print-completion", shell],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "extparity" in done.stdout and "gate" in done.stdout
