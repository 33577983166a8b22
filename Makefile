# Two commands do everything on a fresh machine: `make run` and `make test`.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip install --quiet --disable-pip-version-check -c requirements/constraints.txt
STAMP := $(VENV)/.installed

.PHONY: run test lint format bench install clean locales vendor serve

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
test: install
	@set +e; $(PY) -m pytest --cov --cov-report=term $(PYTEST_ARGS); rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "make test: pytest collected no tests" >&2; exit 1; fi; exit $$rc

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
