# One target per habit: run, test, lint, bench. Everything runs from the project venv.
PYTHON ?= python3
PORT ?= 8000
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
MANAGE := $(BIN)/python manage.py
PURE_MODULES := topology/hardware.py topology/kube.py topology/podspec.py topology/volumes.py topology/trace.py recommender/engine reservations/idle.py

.PHONY: venv run test test-engine lint bench smoke screenshots

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -e '.[dev]'
	touch $@

venv: $(STAMP)

# Zero-config dashboard: SQLite, in-process channel layer, embedded Celery worker + beat.
run: venv
	$(MANAGE) migrate --noinput
	@commands="$$($(MANAGE) help --commands)" || exit 1; \
	if printf '%s\n' "$$commands" | grep -qx load_demo; then \
		$(MANAGE) load_demo; \
	else \
		echo "load_demo is not available yet: starting without demo data"; \
	fi
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
	@pure="$(wildcard $(PURE_MODULES))"; \
	if [ -n "$$pure" ]; then $(BIN)/mypy $$pure; else echo "no pure modules to type-check yet"; fi

bench: venv
	@if [ -d bench ]; then $(BIN)/python -m bench; else echo "bench/ does not exist yet"; exit 1; fi

# README screenshots of the demo cluster (load_demo); needs what the browser tests need.
screenshots: venv
	SCREENSHOTS_DIR=docs/screenshots $(BIN)/pytest tests/browser/test_demo_screenshots.py

smoke: venv
	$(BIN)/python .ci/smoke_run.py
