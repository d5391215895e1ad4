# Two entry points for a fresh machine: `make demo` and `make test`.  Each creates .venv itself.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: test demo native lint bench clean

$(STAMP): pyproject.toml setup.py
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip setuptools wheel
	$(PY) -m pip install -q -e '.[test]'
	touch $(STAMP)

# Recompile the C kernels in place after editing them (the editable install picks them up).
native: $(STAMP)
	$(PY) setup.py -q build_ext --inplace

test: $(STAMP) native
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports --no-cache
	$(PY) -m pytest -q

demo: $(STAMP) native
	$(VENV)/bin/ctplugin demo

bench: $(STAMP) native
	$(PY) -m bench all --quick

clean:
	rm -rf build $(VENV) .pytest_cache .hypothesis
	find . -name '*.so' -path './ctplugin/*' -delete
