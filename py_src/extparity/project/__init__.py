"""The project: its config (``[tool.extparity]``), the errors that stop a command before any
engine starts, and atomic file writes. Every other package may import these; they import none."""
