# Set-up is part of every target: a fresh machine needs only python3 (3.11) and make.
# uv installs the exact versions of uv.lock into .venv (the same venv Pulumi.yaml names).
PYTHON ?= python3
UV_VERSION := 0.13.8
TOOLS := .tools
UV := $(TOOLS)/bin/uv
VENV := .venv
PY := $(VENV)/bin/python
export UV_PYTHON_DOWNLOADS := never

.PHONY: setup render validate test lint fmt hooks golden bench scan clean e2e e2e-build e2e-fixtures engine-bench

$(UV):
	$(PYTHON) -m venv $(TOOLS)
	$(TOOLS)/bin/pip install --quiet --disable-pip-version-check uv==$(UV_VERSION)

# --compile-bytecode: the dependencies' .pyc files are written once, here. Python writes none
# where PYTHONDONTWRITEBYTECODE is set (as on CI's machine), and without them every command
# compiled the provider SDKs from source again (about 2 s of each render or diff).
$(VENV)/.synced: $(UV) uv.lock pyproject.toml
	$(UV) sync --frozen --quiet --compile-bytecode
	touch $@

# The program's own modules are compiled here too (about 0.1 s of every command): Python checks
# each .pyc against its source's mtime, so an edited module is compiled again in memory.
setup: $(VENV)/.synced
	$(PY) -m compileall -q gatewayctl components

# The main job: render every stack offline into build/rendered/<stack> and print a summary.
render: setup
	$(PY) -m gatewayctl render --all

validate: setup
	$(PY) -m gatewayctl validate --all

lint: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy

# Fix what `make lint` checks and a tool can fix: ruff's fixable rules, then the formatting
# (mypy's findings need a person).
fmt: setup
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .

# The git hooks of .pre-commit-config.yaml: the fast checks before a commit, the commit
# message's rule (scripts/commit_msg.py), mypy before a push.
hooks: setup
	$(VENV)/bin/pre-commit install

# The tests CI runs: lint, types, then pytest on every core (pytest-xdist: one worker per
# CPU; each worker starts its own throwaway PostgreSQL on a free port, tests/pg_server.py).
# The printed wall time is the suite's, for the before/after figures of the README.
test: lint
	$(PY) -m pytest -n auto

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

# The real-engine lane (docs/real-engine.md, "The real-engine lane"): build what is missing into the cache
# outside the repository (e2e/versions.toml names every module and artifact; e2e/build.py
# prints one line per step and its time), then run tests/e2e/ against the real Pulumi CLI,
# pulumi-kubernetes and a Kubernetes control plane started on loopback for the run.
E2E_PYTEST := HYPERSHELL_E2E=1 $(PY) -m pytest -ra

e2e-build: setup
	$(PY) e2e/build.py --apt

e2e: e2e-build
	$(E2E_PYTEST) tests/e2e

# Record the JSON the real CLI prints (refresh --preview-only --json, stack export) as the
# fixtures the offline status tests read (tests/fixtures/engine/).
e2e-fixtures: e2e-build
	HYPERSHELL_E2E_RECORD=$(CURDIR)/tests/fixtures/engine $(E2E_PYTEST) tests/e2e/test_e2e_b_drift.py

# Real figures: preview and up from empty for 10, 25, 50 and 100 gateways, before and after
# issue 39 side by side, CPU by process and peak memory (bench/engine_bench.py).
engine-bench: e2e-build
	$(PY) bench/engine_bench.py

clean:
	rm -rf build $(TOOLS) $(VENV)
