# kubeviz — the two commands a new machine needs are `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
NPM_STAMP := node_modules/.installed
HOST ?= 127.0.0.1
PORT ?= 8000
# The local development modes (`make run`, `make worker`, `make bench`) turn DEBUG on, which also
# allows settings.py's built-in development key. Everything else -- docker-compose.yml, a bare
# `manage.py` or daphne -- is production-safe: DEBUG off and KUBEVIZ_SECRET_KEY required
# (docs/deploy.md). Tests use kubeviz/settings_test.py (pyproject.toml) and need neither.
DEV_ENV := KUBEVIZ_DEBUG=1

.PHONY: install run test lint typecheck unit bench worker simulate clean

$(STAMP): requirements.txt requirements-dev.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements-dev.txt
	touch $(STAMP)

$(NPM_STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund --silent
	touch $(NPM_STAMP)

install: $(STAMP) $(NPM_STAMP)

## run: the web app on an embedded default (SQLite, runs in the web process, DEBUG on); REDIS_URL=... uses Redis + Celery
run: install
	$(DEV_ENV) $(PY) manage.py migrate --noinput
	$(DEV_ENV) $(PY) manage.py load_builtins
	@echo ""
	@echo "  kubeviz is starting at http://$(HOST):$(PORT)/ (development mode: DEBUG on; docs/deploy.md for production)"
	@echo ""
	$(DEV_ENV) $(PY) manage.py runserver $(HOST):$(PORT)

## worker: a Celery worker for runs (needs REDIS_URL), beside `make run`
worker: install
	$(DEV_ENV) $(VENV)/bin/celery -A kubeviz worker --loglevel=INFO --concurrency=2

## simulate: the engine alone on a built-in scenario (SCENARIO=name)
simulate: $(STAMP)
	$(PY) -m scheduler_core simulate $(or $(SCENARIO),mixed-small)

## test: lint, strict type check of the engine, then the whole test suite (engine, web, browser)
test: lint typecheck unit

lint: $(STAMP)
	$(PY) -m ruff check .
	$(PY) -m ruff format --check scheduler_core kubeviz tests bench

typecheck: $(STAMP)
	$(PY) -m mypy scheduler_core

unit: install
	$(PY) -m pytest -n 2 -q

## bench: throughput and memory figures (printed, never asserted)
bench: install
	$(DEV_ENV) $(PY) bench/bench_scheduler.py
	$(DEV_ENV) $(PY) bench/bench_compare.py
	$(DEV_ENV) $(PY) bench/bench_live.py

clean:
	rm -rf $(VENV) node_modules .pytest_cache .mypy_cache .ruff_cache build
