# The README's two commands: `make parity` (set up, run the full parity suite) and `make test`.
VENV ?= .venv
PY := $(VENV)/bin/python

.PHONY: setup browsers parity test

$(VENV)/.installed: pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test,engines]'
	touch $@

setup: $(VENV)/.installed browsers

# Debian's browsers: Playwright cannot download its own builds on these machines.
browsers:
	@command -v chromium >/dev/null && command -v firefox-esr >/dev/null || \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium firefox-esr)

parity: setup
	$(VENV)/bin/extparity run --json out/parity.json

test: setup
	$(PY) -m pytest
