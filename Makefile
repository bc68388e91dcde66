# Build, run and test entry points. Works on a fresh clone: the virtualenv is
# created on demand and requirements are re-installed only when they change.

SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PORT ?= 8501
# Per-test ceiling (seconds) so a hung browser test cannot stall a CI run.
PYTEST_TIMEOUT ?= 300
PYTEST_ARGS ?=

export PIP_DISABLE_PIP_VERSION_CHECK := 1

.PHONY: help venv install install-dev run test docker-check bench clean distclean

help:
	@echo "make run           start the app on http://localhost:$(PORT) (PORT=... to change)"
	@echo "make test          install dev requirements and run the test suite"
	@echo "make docker-check  lint the Dockerfile and start its command from a read-only copy"
	@echo "make bench         run bench/run_all.py"
	@echo "make clean         remove caches and test artifacts (distclean also removes $(VENV))"

# The interpreter stands for the virtualenv: (re)create it when it is missing.
$(PY):
	$(PYTHON) -m venv $(VENV)

venv: $(PY)

# Order-only dependency on the interpreter: creating the venv alone must not
# force a reinstall, a changed requirements file must.
$(VENV)/.req-stamp: requirements.txt | $(PY)
	$(PY) -m pip install -q -r requirements.txt
	@touch $@

$(VENV)/.dev-stamp: requirements-dev.txt requirements.txt | $(PY)
	$(PY) -m pip install -q -r requirements-dev.txt
	@touch $@

install: $(VENV)/.req-stamp

install-dev: $(VENV)/.dev-stamp

run: $(VENV)/.req-stamp
	exec $(VENV)/bin/streamlit run app.py --server.port=$(PORT)

# pytest exits 5 when it collected no tests; that counts as a failure here.
test: $(VENV)/.dev-stamp
	bash scripts/ensure_chromium.sh
	@rc=0; $(PY) -m pytest -q --timeout=$(PYTEST_TIMEOUT) $(PYTEST_ARGS) || rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "make test: pytest collected no tests" >&2; exit 1; fi; \
	exit $$rc

docker-check: $(VENV)/.dev-stamp
	bash scripts/docker_check.sh

bench: $(VENV)/.dev-stamp
	$(PY) bench/run_all.py

clean:
	rm -rf .pytest_cache .hypothesis artifacts
	find . -path ./$(VENV) -prune -o -name __pycache__ -type d -prune -exec rm -rf {} +
	find . -path ./$(VENV) -prune -o -name '*.pyc' -type f -exec rm -f {} +

distclean: clean
	rm -rf $(VENV)
