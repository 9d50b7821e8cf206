# Two entry points for a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
EXAMPLE ?= examples/cifar_trainer

# The oldest supported Python: the core and its tests (no torch wheel exists for it).
PYTHON_OLDEST ?= $(firstword $(wildcard $(HOME)/.pyenv/versions/3.9*/bin/python) $(shell command -v python3.9 2>/dev/null))
OLDEST_VENV ?= .venv-oldest

.PHONY: demo test test-oldest references bench clean

# The demo needs only the core (no torch); the tests need the test extras, torch included.
$(BIN)/.installed-core: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e .
	touch $@

$(BIN)/.installed: $(BIN)/.installed-core
	$(BIN)/python -m pip install -q -e '.[test]'
	touch $@

## Scan the bundled example and print the report.
demo: $(BIN)/.installed-core
	$(BIN)/ascend-migrate scan $(EXAMPLE) --fail-on never

## Run the whole test suite, then again on the oldest supported Python.
test: $(BIN)/.installed
	$(BIN)/python -m pytest -q
	$(MAKE) test-oldest

$(OLDEST_VENV)/.installed: pyproject.toml
	$(PYTHON_OLDEST) -m venv $(OLDEST_VENV)
	$(OLDEST_VENV)/bin/python -m pip install -q --upgrade pip
	$(OLDEST_VENV)/bin/python -m pip install -q -e '.[test-core]'
	touch $@

## The suite on the oldest supported Python (tests that run torch skip; the plugin validators
## need Python 3.11 and run in `make test`'s main pass).
test-oldest:
ifeq ($(strip $(PYTHON_OLDEST)),)
	@echo "test-oldest: no Python 3.9 found (set PYTHON_OLDEST=...); skipped"
else
	$(MAKE) $(OLDEST_VENV)/.installed
	$(OLDEST_VENV)/bin/python -m pytest -q -p no:cacheprovider --ignore=tests/plugin
endif

## Regenerate references/*.md from the knowledge base.
references: $(BIN)/.installed
	$(BIN)/ascend-migrate docs --write

## Scan throughput against ripgrep (see bench/README.md).
bench: $(BIN)/.installed
	$(BIN)/python bench/bench_scan.py

clean:
	rm -rf $(VENV) $(OLDEST_VENV) .ascend-migrate-cache .pytest_cache
