"""Engines: kinds of JS (and Python) runtimes that run the subject over a case list.

``base`` says what an engine promises, ``registry`` finds kinds by name, ``driver`` runs one
engine with time limits and restarts, ``linker`` turns the extension's modules into scripts for
engines without a module loader. Kind modules (python, quickjs, v8, spidermonkey, chromium,
firefox) are imported only when an engine of that kind is built.
"""
