# Two entry points (see README.md): `make demo` (the main job) and `make test`.
# Both create .venv on first use and install tensorweave into it.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python

.PHONY: demo test lint bench protos bytecode chaos

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[test]"
	touch $@

# NOTE: precompiled bytecode keeps imports fast even where PYTHONDONTWRITEBYTECODE is set
# (every task process imports tensorweave; cluster start-up time depends on it).
bytecode: $(VENV)/.installed
	$(PY) -m compileall -q tensorweave examples benchmarks >/dev/null

demo: bytecode
	$(VENV)/bin/tensorweave demo

test: bytecode
	$(PY) -m pytest -q

# The chaos tier (tests/chaos): kills/stops tasks during training, fuzzes every RPC, soaks
# a ps. A few minutes on 2 cores; skipped by `make test`.
chaos: bytecode
	$(PY) -m pytest -q -m chaos tests/chaos

lint: $(VENV)/.installed
	$(VENV)/bin/ruff check tensorweave tests examples benchmarks scripts

protos: $(VENV)/.installed
	$(PY) scripts/gen_protos.py
