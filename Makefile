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

.PHONY: install lock run test prerequisites test-fast lint typecheck unit bench worker simulate gpu-trace clean

# Python packages come from the lock files: every package, transitive ones too, at one version with
# its hashes, so every machine installs the same bytes. requirements*.txt are what people edit;
# `make lock` turns them into requirements*.lock. pip installs only uv (requirements-uv.lock,
# hashed); uv installs the rest from the same hash-locked file, in parallel and from its cache.
UV := $(VENV)/bin/uv
$(STAMP): requirements.lock requirements-dev.lock requirements-uv.lock pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --require-hashes -r requirements-uv.lock
	$(UV) pip install --quiet --python $(PY) --require-hashes -r requirements-dev.lock
	$(UV) pip install --quiet --python $(PY) --no-deps -e .
	touch $(STAMP)

$(NPM_STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund --silent
	touch $(NPM_STAMP)

install: $(STAMP) $(NPM_STAMP)

## lock: recompile requirements*.lock (with hashes) after editing requirements*.txt; LOCK_ARGS=--upgrade moves every transitive pin too
LOCK_ARGS ?=
PIP_COMPILE := CUSTOM_COMPILE_COMMAND="make lock" $(VENV)/bin/pip-compile --quiet --generate-hashes --allow-unsafe \
	--strip-extras --no-emit-index-url --no-emit-find-links $(LOCK_ARGS)
lock: $(STAMP)
	$(PIP_COMPILE) --output-file requirements-uv.lock requirements-uv.txt
	$(PIP_COMPILE) --output-file requirements.lock requirements.txt
	$(PIP_COMPILE) --constraint requirements.lock --output-file requirements-dev.lock requirements-dev.txt

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

## test: its prerequisites first (scripts/prerequisites.sh: Chromium, Redis, npm; installed as root, else the command to run), then lint, strict type check of the engine and the web app, and the whole test suite (engine, web, browser)
test: prerequisites
	$(MAKE) --no-print-directory lint typecheck unit

## prerequisites: what make test needs besides the lock files, installed (as root) or named (otherwise)
prerequisites:
	bash scripts/prerequisites.sh

## test-fast: the inner loop -- every test but the slow, browser (e2e) and real-worker ones
test-fast: install
	$(PY) -m pytest -n 2 -q -m "not slow and not e2e and not worker"

lint: $(STAMP)
	$(PY) -m ruff check .
	$(PY) -m ruff format --check scheduler_core kubeviz tests bench

typecheck: $(STAMP)
	$(PY) -m mypy scheduler_core kubeviz

unit: install
	$(PY) -m pytest -n 2 -q

## bench: throughput and memory figures (printed, never asserted)
bench: install
	$(DEV_ENV) $(PY) bench/bench_scheduler.py
	$(DEV_ENV) $(PY) bench/bench_compare.py
	$(DEV_ENV) $(PY) bench/bench_live.py
	$(PY) bench/bench_live_daphne.py
	$(PY) bench/bench_present.py
	$(DEV_ENV) $(PY) bench/bench_gpu.py
	$(DEV_ENV) $(PY) bench/bench_dra.py
	$(PY) bench/bench_hostile.py
	$(PY) bench/bench_abuse.py

## gpu-trace: the Alibaba GPU trace v2023 CSVs into data/alibaba-gpu-v2023/, checked against data/alibaba-gpu-v2023.sha256 (copied from ../shared when it has them)
gpu-trace:
	bash scripts/gpu-trace.sh

clean:
	rm -rf $(VENV) node_modules .pytest_cache .mypy_cache .ruff_cache build
