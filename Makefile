# One command to set up and run the suite against the embedded reference mock, one to run the tests.
# `run` and `mock` install the runtime alone (the kit, and uvloop for the mock's loop); `test`,
# `quick`, `lint` and `types` install the developer tools too. One stamp each, so any order works.
VENV ?= .venv
PYTHON ?= python3
PY := $(VENV)/bin/python

.PHONY: run test quick lint types mock clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q -U pip

$(VENV)/.runtime: pyproject.toml | $(PY)     ## the runtime: what running the suite and the mock needs
	$(PY) -m pip install -q -e ".[uvloop]"
	touch $@

$(VENV)/.installed: pyproject.toml | $(PY)   ## the developer environment: tests, linters, interop clients
	$(PY) -m pip install -q -e ".[dev,interop,redis,uvloop]"
	touch $@

run: $(VENV)/.runtime            ## the suite, all protocols, against the embedded mock
	$(PY) -m conformance run --protocol all

# The tests on every core (pytest-xdist), with byte code cached: they start some 200 processes of
# the kit, and under PYTHONDONTWRITEBYTECODE each would compile it again (docs/development.md).
PYTEST := env -u PYTHONDONTWRITEBYTECODE $(PY) -m pytest -n auto

test: $(VENV)/.installed         ## the project's tests (what CI runs)
	$(PYTEST)

quick: $(VENV)/.installed        ## the tests without the slow ones: the loop before each commit
	$(PYTEST) -m "not slow"

lint: $(VENV)/.installed         ## style, formatting and the import contracts (pyproject.toml)
	$(VENV)/bin/ruff check specs conformance mockserver tests bench scripts
	$(VENV)/bin/ruff format --check specs conformance mockserver tests bench scripts
	$(VENV)/bin/lint-imports

types: $(VENV)/.installed
	$(VENV)/bin/mypy

mock: $(VENV)/.runtime           ## the reference mock on 127.0.0.1:8000
	$(PY) -m mockserver

clean:
	rm -rf $(VENV) reports/*/ .pytest_cache .mypy_cache .ruff_cache
