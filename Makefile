# Two entry points for a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
# What make creates (virtual environments, test downloads and builds, byte-code) lives outside
# the checkout, so the checkout stays a plain plugin folder: Claude Code installs a local folder by
# copying all of it. One folder per checkout, keyed by its path; `make clean` removes it.
DEV_DIR ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/ascend-migrate-dev/$(notdir $(CURDIR))-$(firstword $(shell printf '%s' '$(CURDIR)' | cksum))
VENV ?= $(DEV_DIR)/venv
export ASCEND_MIGRATE_TEST_CACHE ?= $(DEV_DIR)/test-cache
export PYTHONPYCACHEPREFIX ?= $(DEV_DIR)/pycache
# Byte-code goes to that folder, never beside a source file, so it is written even where the shell
# sets PYTHONDONTWRITEBYTECODE: with a prefix and no writes, every Python process the tests start
# compiles the standard library and the package from source again (a quarter of the suite's CPU).
unexport PYTHONDONTWRITEBYTECODE
BIN := $(VENV)/bin
EXAMPLE ?= examples/cifar_trainer

# The oldest supported Python: the core and its tests (no torch wheel exists for it).
PYTHON_OLDEST ?= $(firstword $(wildcard $(HOME)/.pyenv/versions/3.9*/bin/python) $(shell command -v python3.9 2>/dev/null))
OLDEST_VENV ?= $(DEV_DIR)/venv-oldest

.PHONY: demo test test-oldest references skill-tools bench where clean

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

# Test processes (pytest-xdist): one per core by default; whole modules go to one worker, so a
# module's fixtures are built once (tests/conftest.py). TEST_WORKERS=0 runs in one process.
TEST_WORKERS ?= auto
PYTEST_WORKERS := -n $(TEST_WORKERS)

## Run the whole test suite, then again on the oldest supported Python.
test: $(BIN)/.installed
	$(BIN)/python -m pytest -q $(PYTEST_WORKERS) -o cache_dir=$(DEV_DIR)/pytest-cache
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
	$(OLDEST_VENV)/bin/python -m pytest -q $(PYTEST_WORKERS) -p no:cacheprovider --ignore=tests/plugin
endif

## Regenerate references/*.md from the knowledge base, the skills' copies and their toolkit wheels.
references: $(BIN)/.installed
	$(BIN)/ascend-migrate docs --write

## The same, kept as a name for it: the toolkit wheel each skill carries in skills/<skill>/tools/.
skill-tools: references

## Scan throughput against ripgrep (see bench/README.md).
bench: $(BIN)/.installed
	$(BIN)/python bench/bench_scan.py

## Where make keeps its virtual environments and caches for this checkout.
where:
	@echo $(DEV_DIR)

clean:
	rm -rf $(DEV_DIR) .ascend-migrate-cache .pytest_cache .hypothesis
