"""extparity: one corpus through the Python reference, QuickJS and real browsers, with verdicts
compared byte for byte. The harness knows its subject only through `[tool.extparity]`."""


def _version() -> str:
    """pyproject.toml's version, the one truth: read from the checkout when the package runs from
    one (an editable install's metadata keeps the version it was installed with, so a bump would
    not show until a reinstall), else from the installed distribution's metadata, which the wheel's
    build wrote from that same file."""
    import tomllib
    from importlib import metadata
    from pathlib import Path

    checkout = Path(__file__).resolve().parents[2] / "pyproject.toml"
    try:
        project = tomllib.loads(checkout.read_text(encoding="utf-8")).get("project", {})
        version = project.get("version")
        if project.get("name") == "extparity" and isinstance(version, str):
            return version
    except (OSError, ValueError):
        pass
    try:
        return metadata.version("extparity")
    except metadata.PackageNotFoundError:  # sources copied without metadata: say so, not a number
        return "0+unknown"


__version__ = _version()
