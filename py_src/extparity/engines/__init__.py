"""Engines: kinds of JS (and Python) runtimes that run the subject over a case list.

``base`` says what an engine promises, ``driver`` runs one engine with time limits and
restarts, ``child`` and ``worker`` are the two ends of a worker process, ``browser`` is what
the two browser kinds share. The kinds themselves are in ``kinds/``, imported when a config
names them (``project.kinds`` maps names to classes); what a kind is and can do, its class says.
"""
