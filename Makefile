# One target per habit: run, test, lint, bench. Everything runs from the project venv.
PYTHON ?= python3
PORT ?= 8000
VENV := .venv
BIN := $(VENV)/bin
RUNTIME_STAMP := $(VENV)/.runtime-stamp
DEV_STAMP := $(VENV)/.dev-stamp
MANAGE := $(BIN)/python manage.py
# The pure modules: the source_modules of .importlinter's pure-core contract (the one list;
# tests/engine/test_boundary.py reads it too).
PURE_MODULES := $(shell awk '/^\[/ { core = ($$0 == "[importlinter:contract:pure-core]"); listing = 0; next } \
	core && /^source_modules/ { listing = 1; next } \
	core && listing && /^[ \t]+[A-Za-z_]/ { print $$1; next } { listing = 0 }' .importlinter)

.PHONY: venv venv-runtime run test test-engine lint bench smoke screenshots lock

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# The pinned sets (requirements/, with hashes): runtime for `make run`, dev for the rest.
$(RUNTIME_STAMP): requirements/runtime.txt pyproject.toml | $(BIN)/python
	$(BIN)/pip install --require-hashes -r requirements/runtime.txt
	$(BIN)/pip install --no-deps -e .
	touch $@

$(DEV_STAMP): requirements/dev.txt pyproject.toml | $(BIN)/python
	$(BIN)/pip install --require-hashes -r requirements/dev.txt
	$(BIN)/pip install --no-deps -e .
	touch $@ $(RUNTIME_STAMP)

venv-runtime: $(RUNTIME_STAMP)

venv: $(DEV_STAMP)

# Rewrite the pins from pyproject.toml (requirements/README.md says when).
lock: venv
	$(BIN)/pip-compile --quiet --generate-hashes --strip-extras --allow-unsafe \
		--no-emit-index-url --no-emit-find-links \
		--output-file requirements/runtime.txt pyproject.toml
	$(BIN)/pip-compile --quiet --generate-hashes --strip-extras --allow-unsafe \
		--no-emit-index-url --no-emit-find-links --extra dev \
		--output-file requirements/dev.txt pyproject.toml requirements/dev.in

# Zero-config dashboard: SQLite, in-process channel layer, embedded Celery worker + beat.
# Installs the runtime set only.
run: venv-runtime
	$(MANAGE) migrate --noinput
	$(MANAGE) load_demo
	$(MANAGE) rundemo --port $(PORT)

# The whole suite. Without DATABASE_URL/REDIS_URL, tests/with_services.py starts a
# throwaway Postgres and Redis for the run (system binaries, else the dev wheels) and
# stops them after. Browser tests need Chromium (capacityweb/browser.py finds it).
# PYTEST_STATUS_FILE (used by .ci/run) receives pytest's own exit status, e.g. 5 = no tests.
test: venv
	@echo "$(BIN)/pytest $(PYTEST_ARGS)"; status=0; \
	$(BIN)/python -m tests.with_services $(BIN)/pytest $(PYTEST_ARGS) || status=$$?; \
	if [ -n "$(PYTEST_STATUS_FILE)" ]; then echo $$status > "$(PYTEST_STATUS_FILE)"; fi; \
	exit $$status

test-engine: venv
	$(BIN)/pytest tests/engine -p no:django

lint: venv
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(MANAGE) makemigrations --check --dry-run
	$(BIN)/lint-imports
	$(BIN)/mypy $(addprefix -p ,$(PURE_MODULES))

bench: venv
	$(BIN)/python -m bench

# README screenshots of the demo cluster (load_demo); needs what the browser tests need.
screenshots: venv
	SCREENSHOTS_DIR=docs/screenshots $(BIN)/pytest tests/browser/test_demo_screenshots.py

smoke: venv
	$(BIN)/python .ci/smoke_run.py
