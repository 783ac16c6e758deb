# One target per habit: run, test, lint, bench. Everything runs from the project venv.
PYTHON ?= python3
PORT ?= 8000
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
MANAGE := $(BIN)/python manage.py
PURE_MODULES := topology/hardware.py topology/kube.py topology/trace.py recommender/engine reservations/idle.py

.PHONY: venv run test test-engine lint bench smoke screenshots

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -e '.[dev]'
	touch $@

venv: $(STAMP)

# Zero-config dashboard: SQLite, in-process channel layer, embedded Celery worker + beat.
run: venv
	$(MANAGE) migrate --noinput
	$(MANAGE) load_demo
	$(MANAGE) rundemo --port $(PORT)

# The whole suite; integration/browser tests need Postgres, Redis, Chromium (see .ci/run).
# PYTEST_STATUS_FILE (used by .ci/run) receives pytest's own exit status, e.g. 5 = no tests.
test: venv
	@echo "$(BIN)/pytest $(PYTEST_ARGS)"; status=0; $(BIN)/pytest $(PYTEST_ARGS) || status=$$?; \
	if [ -n "$(PYTEST_STATUS_FILE)" ]; then echo $$status > "$(PYTEST_STATUS_FILE)"; fi; \
	exit $$status

test-engine: venv
	$(BIN)/pytest tests/engine -p no:django

lint: venv
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(MANAGE) makemigrations --check --dry-run
	$(BIN)/lint-imports
	$(BIN)/mypy $(PURE_MODULES)

bench: venv
	$(BIN)/python -m bench

# README screenshots of the demo cluster (load_demo); needs what the browser tests need.
screenshots: venv
	SCREENSHOTS_DIR=docs/screenshots $(BIN)/pytest tests/browser/test_demo_screenshots.py

smoke: venv
	$(BIN)/python .ci/smoke_run.py
