"""Errors that stop a command before any engine starts (exit 2)."""

from __future__ import annotations


class ConfigError(Exception):
    """The config is missing or malformed; the message names the file and key."""
