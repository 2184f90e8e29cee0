"""`extparity`: run the parity suite, gate a release, diff inputs across engines, lint and count the corpus.

Exit codes: 0 everything agreed and met expectations (for `gate`: every check passed); 1 a
divergence, an unmet expectation, a module problem, a failed engine, a bad corpus line or a
failed gate check; 2 the command line or config is wrong; 130 / 143 interrupted by SIGINT /
SIGTERM (every engine stopped, no report half-written).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
import threading

import shtab

from . import __version__
from .commands import compare, corpus, diff, fuzz, gate, init, merge, report, run
from .commands.common import Stdout, UsageError
from .project.errors import ConfigError

CONFIG_HELP = "pyproject.toml with [tool.extparity] (default: nearest)"
COMMANDS = (init, run, gate, fuzz, report, compare, diff, corpus, merge)


class Terminated(BaseException):
    """SIGTERM, turned into an exception so that cleanup runs as it does for Ctrl-C."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="extparity", description=__doc__.split("\n")[0])
    parser.add_argument("--version", action="version", version=f"extparity {__version__}")
    # shtab writes the script from this parser, so completion cannot drift from the options
    shtab.add_argument_to(parser, "--print-completion", help="print a shell completion script (bash, zsh, tcsh)")
    parser.add_argument("--config", help=CONFIG_HELP)
    commands = parser.add_subparsers(dest="command", required=True)
    for command in COMMANDS:
        command.add_parser(commands)
    _accept_config_after(commands)
    return parser


def _accept_config_after(commands: argparse._SubParsersAction) -> None:
    """``extparity run --config X`` (and ``corpus lint --config X``) as well as ``extparity --config
    X run``: every subcommand takes it too, without a default of its own to hide the first."""
    for sub in commands.choices.values():
        sub.add_argument("--config", default=argparse.SUPPRESS, help=CONFIG_HELP)
        for action in sub._actions:
            if isinstance(action, argparse._SubParsersAction):
                _accept_config_after(action)


def _terminate(signum, frame):
    raise Terminated()


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    on_main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _terminate) if on_main_thread else None
    try:
        if getattr(args, "json", None) != "-":
            return args.handler(args)
        # `--json -`: the JSON is the command's stdout, so everything else it prints goes to stderr
        args.json = Stdout(sys.stdout)
        with contextlib.redirect_stdout(sys.stderr):
            return args.handler(args)
    except (ConfigError, UsageError) as error:
        print(f"extparity: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("extparity: interrupted; every engine was stopped and no report was written", file=sys.stderr)
        return 130
    except Terminated:
        print("extparity: terminated; every engine was stopped and no report was written", file=sys.stderr)
        return 143
    except BrokenPipeError:
        # `| head` closed the pipe: not a failure. Point stdout at devnull so the interpreter's
        # final flush does not raise again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


if __name__ == "__main__":
    sys.exit(main())
