# topobridge developer entry points. `make demo` and `make test` are the two set-up commands
# the README starts with; both create the virtualenv and install what they need.

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
PYTEST_ARGS ?=
MINUTES ?= 30
SEED ?=

.PHONY: demo demo-down test venv control-plane test-tools lint crds docs-picture explore

venv: $(STAMP)

# -qq: pip still prints errors, but not setuptools' notice on every editable install (and the
# build backend's other notices), which buried the demo's first lines.
$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -qq --upgrade pip
	$(PY) -m pip install -qq -e '.[dev]'
	@touch $(STAMP)

control-plane:
	bash hack/install-control-plane.sh

# promtool and headless chromium (Debian's packages) for the tests that drive them.
test-tools:
	bash hack/install-test-tools.sh

# The built-in demo: a local control plane with topobridge running, the seed's 12-node
# spine/block cluster, and the seed's examples applied one by one (e2e/demo.py).
demo: venv control-plane
	$(PY) -m e2e.demo up

demo-down: venv
	$(PY) -m e2e.demo down

# The layering contracts (pure code never imports the API client), strict typing, lint, format.
lint: venv
	$(VENV)/bin/lint-imports
	$(VENV)/bin/mypy
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

crds: venv
	$(VENV)/bin/topobridge crds
	$(VENV)/bin/topobridge manifests

# docs/images/*.svg from their Graphviz sources (needs `dot`: apt-get install graphviz); the
# placer's layers source is made from its imports first (standard library only). A test fails
# while a picture is older than its source.
docs-picture:
	$(PYTHON) hack/placer_layers.py --write
	bash hack/docs-picture.sh

# Integration tests run against a real kube-apiserver: the control plane is installed first.
# pytest exit 5 (nothing collected) is a failure here, never a pass.
test: venv control-plane test-tools lint
	@$(PY) -m pytest $(PYTEST_ARGS); rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "make test: pytest collected no tests (exit 5)" >&2; fi; \
	exit $$rc

# Outside the gate: the oracle, hostile-cluster and metamorphic property tests and the fuzzer on
# fresh seeds for MINUTES (SEED fixes the seeds tried). Each failing seed is printed with the
# command that replays it; the last line is `summary: ...` (hack/explore.py).
explore: venv
	$(PY) hack/explore.py --minutes $(MINUTES) $(if $(SEED),--seed $(SEED))
