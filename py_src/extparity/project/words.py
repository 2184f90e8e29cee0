"""Counted nouns in messages: "1 case", "2 cases", so that no line reads "1 cases"."""

from __future__ import annotations


def count(n: int, noun: str, plural: str | None = None) -> str:
    """``n`` and the noun in the number ``n`` asks for (``plural`` when adding "s" is wrong)."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"
