# Two entry points (README): `make run` solves the default config, `make test` runs the tests;
# `make screenshots` retakes docs/lab/*.png from the lab over $(RESULTS) (results/ of `make run`).
# Both create .venv with the project installed on first use; only Python 3.11+ is needed.
PYTHON ?= python3
VENV ?= .venv
BIN = $(VENV)/bin
RESULTS ?= results

.PHONY: run test bench screenshots clean-venv

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[test]"
	touch $@

run: $(VENV)/.installed
	$(BIN)/snakemake --cores all

test: $(VENV)/.installed
	$(BIN)/python -m pytest

bench: $(VENV)/.installed
	$(BIN)/python bench/run.py --json

screenshots: $(VENV)/.installed
	$(BIN)/python docs/screenshots.py $(RESULTS) --out docs/lab

clean-venv:
	rm -rf $(VENV)
