# Docket: `make run` serves the demo console, `make serve` serves it for real, `make test` runs
# the suite.
SHELL := /bin/bash
.DEFAULT_GOAL := help

VENV ?= .venv
BIN := $(VENV)/bin
PORT ?= 8000

# Find a Python 3.12+ by itself: $PYTHON, then python3.13/python3.12/python3 on PATH, then pyenv.
PYTHON ?= $(shell for c in python3.13 python3.12 python3 \
	$$(ls -d $$HOME/.pyenv/versions/3.1[2-9]*/bin/python 2>/dev/null | sort -r) \
	/usr/local/bin/python3.13 /usr/local/bin/python3.12 /usr/bin/python3.13 /usr/bin/python3.12; do \
	p=$$(command -v $$c 2>/dev/null) || continue; \
	$$p -c 'import sys; sys.exit(0 if sys.version_info >= (3, 12) else 1)' >/dev/null 2>&1 && { echo $$p; break; }; \
	done)

.PHONY: help install run serve worker lint browser test test-sqlite test-postgres test-e2e bench clean

help:
	@echo "make run      install, migrate, load the demo, create demo users, serve on 127.0.0.1:$(PORT)"
	@echo "make test     install and run the whole test suite"
	@echo "make serve    production: migrate, collectstatic, then gunicorn, a Celery worker and beat"
	@echo "              (needs DATABASE_URL, CELERY_BROKER_URL, DJANGO_SECRET_KEY, DJANGO_ALLOWED_HOSTS)"
	@echo "make worker   start a Celery worker (needs CELERY_BROKER_URL)"

$(BIN)/uv:
	@if [ -z "$(PYTHON)" ]; then \
		echo "Docket needs Python 3.12 or newer and found none on PATH or in pyenv." >&2; \
		echo "Install one (e.g. 'pyenv install 3.12') or run: make PYTHON=/path/to/python3.12 ..." >&2; \
		exit 1; fi
	@echo "Using $(PYTHON) ($$($(PYTHON) --version))"
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --disable-pip-version-check "uv==0.13.9"

install: $(BIN)/uv
	UV_PROJECT_ENVIRONMENT=$(VENV) $(BIN)/uv sync --frozen --inexact --python $(BIN)/python -q

run: install
	mkdir -p var
	DJANGO_DEBUG=1 $(BIN)/python manage.py migrate --noinput
	DJANGO_DEBUG=1 DOCKET_LOG_LEVEL=WARNING $(BIN)/python manage.py load_demo
	DJANGO_DEBUG=1 $(BIN)/python manage.py demo_users --url http://127.0.0.1:$(PORT)/
	DJANGO_DEBUG=1 $(BIN)/python manage.py runserver 127.0.0.1:$(PORT)

# Production (docs/operations.md): PORT for gunicorn, PROCESSES to run only some (web worker beat).
serve: install
	$(BIN)/python -m console.serve --port $(PORT) $(PROCESSES)

worker: install
	@if [ -z "$$CELERY_BROKER_URL" ]; then echo "Set CELERY_BROKER_URL (e.g. redis://127.0.0.1:6379/0) to run a worker." >&2; exit 1; fi
	$(BIN)/celery -A console worker -l info --concurrency $${CELERY_CONCURRENCY:-2}

# Lint and format first: any finding fails the run before a test starts.
lint: install
	@echo "== ruff check and ruff format --check"
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

# Chromium first: the browser tests need it, and nothing after this step may find it missing.
browser: install
	@echo "== a Chromium for the browser tests"
	$(BIN)/python -m tests.e2e.browser

# The suite on SQLite, then on PostgreSQL when DATABASE_URL (or TEST_DATABASE_URL) is set,
# then the browser tests in Chromium.
test: lint browser
	@echo "== the suite on SQLite"
	$(BIN)/python -m pytest -m "not e2e and not postgres" -q
	@if [ -n "$(TEST_DATABASE_URL)" ]; then \
		echo "== the suite again on PostgreSQL"; \
		DATABASE_URL=$(TEST_DATABASE_URL) $(BIN)/python -m pytest -m "not e2e" -q; \
	else echo "== PostgreSQL pass left out: set TEST_DATABASE_URL=postgres://... to run it"; fi
	@echo "== the browser tests in Chromium"
	$(BIN)/python -m pytest -m e2e -q

bench: install
	@for b in bench/*.py; do echo "== $$b"; $(BIN)/python $$b; done

clean:
	rm -rf $(VENV) var/*.sqlite3 staticfiles
