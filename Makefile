# Two entry points for a fresh machine: `make demo` and `make test`.  Each creates .venv itself.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
NATIVE := $(VENV)/.native
NATIVE_SOURCES := setup.py $(shell find ctplugin -name '*.c' -o -name '*.h')

.PHONY: test demo native lint bench clean

# The editable install (PEP 660) also compiles the C kernels in place; every optional extra
# (node, replay, plot, dask) is installed, so the tests and the demos have all they need.
$(STAMP): pyproject.toml setup.py
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip setuptools wheel
	$(PY) -m pip install -q -e '.[all,test]'
	touch $(STAMP) $(NATIVE)

# Recompile the C kernels in place when a C source changed since the last build: an editable
# reinstall, no deprecated `setup.py` command (CTPLUGIN_ONLY_EXT=name,... limits it to some
# extensions). The freshness test runs in the recipe because the install above builds them too.
$(NATIVE): $(NATIVE_SOURCES) | $(STAMP)
	@if [ ! -e $(NATIVE) ] || [ -n "$$(find $(NATIVE_SOURCES) -newer $(NATIVE))" ]; then \
		echo "$(PY) -m pip install -q --no-deps --no-build-isolation -e ."; \
		$(PY) -m pip install -q --no-deps --no-build-isolation -e . && touch $(NATIVE); fi

native: $(NATIVE)

test: $(STAMP) native
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports --no-cache
	$(PY) -m pytest -q

demo: $(STAMP) native
	$(VENV)/bin/ctplugin demo
	$(VENV)/bin/ctplugin demo dlc

bench: $(STAMP) native
	$(PY) -m bench all --quick

clean:
	rm -rf build $(VENV) .pytest_cache .hypothesis
	find . -name '*.so' -path './ctplugin/*' -delete
