# Two commands do all set-up on a fresh machine:
#   make run    set up, then train the quickstart spec (an embedded default, no download)
#   make test   set up, then run the whole test suite (what CI's .ci/run runs)
# For everyday work, `make test-fast` runs the suite without the tests marked slow
# (pytest -m "not slow"; the slow tier is the longer end-to-end tests).
# Both create/reuse .venv; torch 2.13.0 is installed unless the venv already has a torch
# (install your CUDA build into .venv first to use a GPU).

PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.zoo-installed

.PHONY: run test test-fast setup bench

setup: $(STAMP)

$(STAMP): pyproject.toml plugins/zoo-example-plugin/pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip 'setuptools>=77'
	$(PY) -c "import torch" 2>/dev/null || $(PY) -m pip install --quiet torch==2.13.0
	$(PY) -m pip install --quiet -e '.[test]'
	touch $(STAMP)

run: $(STAMP)
	$(VENV)/bin/zoo run specs/quickstart.yaml

test: $(STAMP)
	$(VENV)/bin/pytest -q

test-fast: $(STAMP)
	$(VENV)/bin/pytest -q -m "not slow"

bench: $(STAMP)
	$(PY) bench/run.py --quick
