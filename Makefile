# Set-up is part of every target: a fresh machine needs only python3 (3.11) and make.
# uv installs the exact versions of uv.lock into .venv (the same venv Pulumi.yaml names).
PYTHON ?= python3
UV_VERSION := 0.13.8
TOOLS := .tools
UV := $(TOOLS)/bin/uv
VENV := .venv
PY := $(VENV)/bin/python
export UV_PYTHON_DOWNLOADS := never

.PHONY: setup render validate test lint golden bench clean

$(UV):
	$(PYTHON) -m venv $(TOOLS)
	$(TOOLS)/bin/pip install --quiet --disable-pip-version-check uv==$(UV_VERSION)

$(VENV)/.synced: $(UV) uv.lock pyproject.toml
	$(UV) sync --frozen --quiet
	touch $@

setup: $(VENV)/.synced

# The main job: render every stack offline into build/rendered/<stack> and print a summary.
render: setup
	$(PY) -m stacks render --all

validate: setup
	$(PY) -m stacks validate --all

lint: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy

# The tests CI runs: lint, types, then pytest.
test: lint
	$(PY) -m pytest

# Regenerate the golden snapshots after a reviewed change to the rendered output.
golden: setup
	$(PY) -m stacks render --all --out tests/golden -q

bench: setup
	$(PY) bench/render_bench.py

clean:
	rm -rf build $(TOOLS) $(VENV)
