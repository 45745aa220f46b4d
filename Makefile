# One command to set up and run the suite against the embedded reference mock, one to run the tests.
VENV ?= .venv
PYTHON ?= python3
PY := $(VENV)/bin/python

.PHONY: run test quick lint types mock clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q -U pip
	$(PY) -m pip install -q -e ".[dev,interop,redis,uvloop]"
	touch $@

run: $(VENV)/.installed          ## the suite, all protocols, against the embedded mock
	$(PY) -m conformance run --protocol all

test: $(VENV)/.installed         ## the project's tests (what CI runs)
	$(PY) -m pytest

quick: $(VENV)/.installed        ## the tests without the slow ones
	$(PY) -m pytest -m "not slow"

lint: $(VENV)/.installed         ## style, formatting and the import contracts (pyproject.toml)
	$(VENV)/bin/ruff check specs conformance mockserver tests bench scripts
	$(VENV)/bin/ruff format --check specs conformance mockserver tests bench scripts
	$(VENV)/bin/lint-imports

types: $(VENV)/.installed
	$(VENV)/bin/mypy

mock: $(VENV)/.installed         ## the reference mock on 127.0.0.1:8000
	$(PY) -m mockserver

clean:
	rm -rf $(VENV) reports/*/ .pytest_cache .mypy_cache .ruff_cache
