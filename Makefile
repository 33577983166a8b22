# Two commands do everything on a fresh machine: `make run` and `make test`.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip install --quiet --disable-pip-version-check -c requirements/constraints.txt
STAMP := $(VENV)/.installed

.PHONY: run test test-loaded fuzz system-deps lint format bench install clean locales vendor serve

$(PY):
	$(PYTHON) -m venv $(VENV)

$(STAMP): $(PY) pyproject.toml requirements/test.txt requirements/constraints.txt
	$(PIP) -e '.[web,measure]' -r requirements/test.txt
	$(PY) -m compileall -q src >/dev/null  # pip byte-compiles what it installs, but not an editable src/
	touch $@

install: $(STAMP)

## run: the main job: the web calculator on http://127.0.0.1:8000/
run: install
	$(VENV)/bin/dpscale serve $(SERVE_ARGS)

## test: the whole suite; an empty selection (pytest exit 5) is a failure
test: install system-deps
	@set +e; $(PY) -m pytest --cov --cov-report=term $(PYTEST_ARGS); rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "make test: pytest collected no tests" >&2; exit 1; fi; exit $$rc

## test-loaded: the tests of real processes and real time, three runs in a row beside two CPU-bound processes that it starts and ends by their pids; fails if any run fails
LOADED_TESTS ?= tests/distributed tests/testbed tests/browser tests/web/test_server.py
test-loaded: install system-deps
	@busy=""; for i in 1 2; do $(PY) -c 'while True: pass' & busy="$$busy $$!"; done; \
	trap 'kill $$busy 2>/dev/null' EXIT; \
	echo "make test-loaded: two busy processes ($$busy), three runs of $(LOADED_TESTS)"; \
	for run in 1 2 3; do \
	  start=$$SECONDS; $(PY) -m pytest -q -p no:cacheprovider $(LOADED_TESTS) $(PYTEST_ARGS); rc=$$?; \
	  echo "make test-loaded: run $$run of 3 ended with $$rc after $$((SECONDS - start)) s"; \
	  if [ $$rc -eq 5 ]; then echo "make test-loaded: pytest collected no tests" >&2; exit 1; fi; \
	  if [ $$rc -ne 0 ]; then exit $$rc; fi; \
	done

## fuzz: the Hypothesis tests with a random seed and thousands of examples each (SEED=n replays a run); its finds become @examples
fuzz: install
	@seed=$(SEED); seed=$${seed:-$$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}; \
	echo "make fuzz: --hypothesis-seed=$$seed (make fuzz SEED=$$seed replays this run)"; \
	set +e; DPSCALE_HYPOTHESIS=fuzz $(PY) -m pytest -m hypothesis --hypothesis-seed=$$seed $(PYTEST_ARGS); rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "make fuzz: pytest collected no tests" >&2; exit 1; fi; \
	if [ $$rc -ne 0 ]; then echo "make fuzz: failed with SEED=$$seed; keep each find as an @example beside its test" >&2; fi; \
	exit $$rc

## system-deps: Debian's chromium (browser tests) and iproute2 (network testbed), installed by apt-get when missing and run as root; else nothing, and those tests skip saying why
system-deps:
	@missing=""; \
	[ -x "$${DPSCALE_CHROMIUM:-/usr/bin/chromium}" ] || missing="chromium"; \
	{ command -v ip && command -v tc; } >/dev/null 2>&1 || missing="$${missing:+$$missing }iproute2"; \
	if [ -n "$$missing" ] && [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "make: installing $$missing with apt-get"; \
	  export DEBIAN_FRONTEND=noninteractive; \
	  log=$$( { apt-get update -qq && apt-get install -y -qq -o DPkg::Lock::Timeout=120 $$missing; } </dev/null 2>&1 ) \
	    || echo "$$log"$$'\n'"make: could not install $$missing; the tests that need it will skip" >&2; \
	fi

## lint: format check, lint, strict types
lint: install
	$(VENV)/bin/ruff format --check src tests bench
	$(VENV)/bin/ruff check src tests bench
	$(VENV)/bin/mypy

format: install
	$(VENV)/bin/ruff format src tests bench
	$(VENV)/bin/ruff check --fix src tests bench

## bench: speed as ratios measured side by side in one run
bench: install
	$(PY) -m compileall -q src >/dev/null  # fresh bytecode for what was edited since: a user's install has it
	$(PY) -m bench.run

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis .coverage

## locales: extract strings, update the French catalog, compile it
locales: install
	$(VENV)/bin/pybabel extract -F babel.cfg --no-location --sort-output --project dpscale \
	  -k InvalidInput:3 -k AmbiguousInput:3 -k MissingInput:2 -k of -o src/dpscale/locales/dpscale.pot src
	$(VENV)/bin/pybabel update -D dpscale -i src/dpscale/locales/dpscale.pot -d src/dpscale/locales --no-fuzzy-matching --ignore-obsolete
	$(VENV)/bin/pybabel compile -D dpscale -d src/dpscale/locales

## vendor: refresh the front-end files the app serves, from the npm registry (see web/package.json)
vendor:
	rm -rf build/npm && mkdir -p build/npm
	cd build/npm && npm pack --silent swagger-ui-dist@$$(python3 -c 'import json;print(json.load(open("../../src/dpscale/web/package.json"))["dependencies"]["swagger-ui-dist"])') && tar xzf swagger-ui-dist-*.tgz
	cp build/npm/package/swagger-ui-bundle.js build/npm/package/swagger-ui.css build/npm/package/LICENSE src/dpscale/web/static/vendor/swagger-ui/
