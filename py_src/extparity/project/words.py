"""Counted nouns in messages: "1 case", "2 cases", so that no line reads "1 cases"."""

from __future__ import annotations


def count(n: int, noun: str, plural: str | None = None) -> str:
    """``n`` and the noun in the number ``n`` asks for (``plural`` when adding "s" is wrong)."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


QUOTE = 200  # characters of code or input a line quotes at most


def shortened(text: str, limit: int = QUOTE) -> str:
    """``text`` cut to ``limit`` characters, ending in "..." when cut."""
    return text if len(text) <= limit else text[:limit - 3] + "..."


def clipped(text: str, limit: int = QUOTE) -> str:
    """An input (or any text whose every character counts) as a line quotes it: at most ``limit``
    characters, and how many were left out."""
    if len(text) <= limit:
        return text
    return f"{text[:limit - 1]}… ({len(text) - limit + 1:,} more characters)"


def quote(code: str, limit: int = QUOTE) -> str:
    """Code as a line quotes it: its white space runs as one space, then ``clipped`` (a minified
    line is thousands of characters long)."""
    return clipped(" ".join(code.split()), limit)
