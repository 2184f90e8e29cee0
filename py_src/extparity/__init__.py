"""extparity: one corpus through the Python reference, QuickJS and real browsers, with verdicts
compared byte for byte. The harness knows its subject only through `[tool.extparity]`."""

__version__ = "0.1.0"
