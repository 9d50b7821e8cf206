# Two entry points for a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
EXAMPLE ?= examples/cifar_trainer

.PHONY: demo test references bench clean

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

## Run the whole test suite.
test: $(BIN)/.installed
	$(BIN)/python -m pytest -q

## Regenerate references/*.md from the knowledge base.
references: $(BIN)/.installed
	$(BIN)/ascend-migrate docs --write

## Scan throughput against ripgrep (see bench/README.md).
bench: $(BIN)/.installed
	$(BIN)/python bench/bench_scan.py

clean:
	rm -rf $(VENV) .ascend-migrate-cache .pytest_cache
