"""The `extparity` subcommands, one module each: `run`, `diff`, `corpus`, ...

Each module has ``add_parser(subparsers)``; ``cli.COMMANDS`` lists them in help order. A
command raises ``ConfigError``/``UsageError`` for mistakes found before any engine starts
(exit 2), and returns 0 or 1 itself.
"""
