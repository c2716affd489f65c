# Two entry points (see README.md): `make demo` (the main job) and `make test`.
# Both create .venv on first use and install tensorweave into it.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python

.PHONY: demo test interop chaos lint bench protos bytecode

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

# The main suite. The interop and chaos tiers have their own targets (below); CI runs all three.
test: bytecode
	$(PY) -m pytest -q -m "not chaos and not interop"

# Interop tier: a real TensorFlow in its own venv (never imported by tensorweave); the tests
# run it as a separate process through TENSORWEAVE_TF_PYTHON. If the package cannot be
# installed (no registry), the tier says so loudly and is skipped.
TF_VENV ?= .venv-tf
TF_PACKAGE ?= tensorflow-cpu==2.21.0

$(TF_VENV)/.installed:
	$(PYTHON) -m venv $(TF_VENV)
	@echo "installing $(TF_PACKAGE) into $(TF_VENV) (the interop tier's reference)"
	@$(TF_VENV)/bin/python -m pip install --quiet $(TF_PACKAGE) && touch $@ || \
	  echo "!!!! INTEROP: could not install $(TF_PACKAGE); interop tests will be SKIPPED !!!!"

interop: bytecode
	-@$(MAKE) --no-print-directory $(TF_VENV)/.installed
	@if [ -f $(TF_VENV)/.installed ]; then \
	  TENSORWEAVE_TF_PYTHON=$(abspath $(TF_VENV))/bin/python $(PY) -m pytest -q -m interop tests/interop; \
	else \
	  echo "!!!! INTEROP TIER SKIPPED: $(TF_PACKAGE) is not installable here !!!!"; \
	fi

# The chaos tier (tests/chaos): kills/stops tasks during training, fuzzes every RPC, soaks
# a ps. A few minutes on 2 cores; skipped by `make test`.
chaos: bytecode
	$(PY) -m pytest -q -m chaos tests/chaos

lint: $(VENV)/.installed
	$(VENV)/bin/ruff check tensorweave tests examples benchmarks scripts

protos: $(VENV)/.installed
	$(PY) scripts/gen_protos.py
