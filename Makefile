# kubeviz — the two commands a new machine needs are `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
SCENARIO ?= scheduler_core/scenarios/mixed-small.yaml

.PHONY: run test lint typecheck unit bench clean

$(STAMP): requirements.txt requirements-dev.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements-dev.txt
	touch $(STAMP)

## run: simulate a built-in scenario and print its summary (the web app replaces this)
run: $(STAMP)
	$(PY) -m scheduler_core simulate $(SCENARIO)

## test: lint, strict type check of the engine, then the whole test suite
test: lint typecheck unit

lint: $(STAMP)
	$(PY) -m ruff check .
	$(PY) -m ruff format --check scheduler_core tests bench

typecheck: $(STAMP)
	$(PY) -m mypy scheduler_core

unit: $(STAMP)
	$(PY) -m pytest -n 2 -q

## bench: throughput and memory figures (printed, never asserted)
bench: $(STAMP)
	$(PY) bench/bench_scheduler.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
