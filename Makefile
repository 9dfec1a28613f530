# Set-up is part of every target: a fresh machine needs only python3 (3.11) and make.
# uv installs the exact versions of uv.lock into .venv (the same venv Pulumi.yaml names).
PYTHON ?= python3
UV_VERSION := 0.13.8
TOOLS := .tools
UV := $(TOOLS)/bin/uv
VENV := .venv
PY := $(VENV)/bin/python
export UV_PYTHON_DOWNLOADS := never

.PHONY: setup render validate test lint golden bench scan clean

$(UV):
	$(PYTHON) -m venv $(TOOLS)
	$(TOOLS)/bin/pip install --quiet --disable-pip-version-check uv==$(UV_VERSION)

$(VENV)/.synced: $(UV) uv.lock pyproject.toml
	$(UV) sync --frozen --quiet
	touch $@

setup: $(VENV)/.synced

# The main job: render every stack offline into build/rendered/<stack> and print a summary.
render: setup
	$(PY) -m gatewayctl render --all

validate: setup
	$(PY) -m gatewayctl validate --all

lint: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy

# The tests CI runs: lint, types, then pytest.
test: lint
	$(PY) -m pytest

# Regenerate the golden snapshots after a reviewed change to the rendered output. They are
# removed first: a merged golden tree holds files no single render wrote, and the render
# never replaces such a directory (its .stacks-output, not kept in git, lists what it wrote).
golden: setup
	rm -rf tests/golden
	$(PY) -m gatewayctl render --all --out tests/golden -q

# checkov (Kubernetes framework, offline) over every stack's rendered manifests. It lives in
# its own venv from scan/requirements.txt (exact pins with hashes): its dependency tree is
# large and independent of the program's. scan/run.py scans the production stacks in a run of
# their own, without the skips production does not grant (CKV_K8S_43: images by digest).
CHECKOV := $(TOOLS)/checkov/bin/checkov

$(CHECKOV): scan/requirements.txt
	$(PYTHON) -m venv $(TOOLS)/checkov
	$(TOOLS)/checkov/bin/pip install --quiet --disable-pip-version-check --require-hashes --no-deps -r scan/requirements.txt
	touch $@

scan: setup $(CHECKOV)
	$(PY) -m gatewayctl render --all --out build/scan -q
	$(PY) scan/run.py --checkov $(CHECKOV) build/scan

bench: setup
	$(PY) bench/render_bench.py

clean:
	rm -rf build $(TOOLS) $(VENV)
