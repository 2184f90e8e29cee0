"""Which code of the verified modules the corpus ran: Chromium's precise block coverage in the
page and in the background service worker, and coverage.py's branch coverage of the reference.

Why here and not in the engine kinds: coverage is an observer. It wraps the sessions the Chromium
kind opens (``browser.py``), reads the modules' sources as the linker does (``sources.py``),
turns V8's ranges into blocks with the cases that reach them (``blocks.py``), asks the Python
reference's worker for coverage.py data (``reference.py``) and writes one deterministic document
(``record.py``) that the gate's ``coverage`` check and the HTML report read.
"""
