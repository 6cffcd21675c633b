# Two commands do everything on a fresh machine:  make demo  ·  make test
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
TORCH_PIN := torch==2.13.0
# Where the pinned torch comes from when the interpreter has none. Empty: pip's configured index (on these
# machines a local CPU wheel). Elsewhere PyPI's Linux wheel is the CUDA build: for the CPU one use
#   make setup TORCH_INDEX=https://download.pytorch.org/whl/cpu
TORCH_INDEX ?=

.PHONY: setup demo test exercises notebooks release check clean report-screenshot

# The virtual environment. torch is installed only when the interpreter has none (then the pinned CPU wheel):
# never an unpinned torch, which would pull gigabytes of CUDA packages.
$(VENV)/.ready: pyproject.toml constraints.txt
	@command -v bwrap >/dev/null 2>&1 || { echo "installing bubblewrap (the sandbox)"; \
	  (apt-get install -y -q bubblewrap >/dev/null 2>&1 || (apt-get update -q >/dev/null 2>&1 && apt-get install -y -q bubblewrap >/dev/null 2>&1) \
	   || sudo -n apt-get install -y -q bubblewrap >/dev/null 2>&1) \
	  || echo "WARNING: could not install bubblewrap: learner code will run without the sandbox"; }
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip >/dev/null
	$(PY) -c "import torch" 2>/dev/null || $(PY) -m pip install -q -c constraints.txt $(if $(TORCH_INDEX),--index-url $(TORCH_INDEX)) $(TORCH_PIN)
	$(PY) -m pip install -q -c constraints.txt -e ".[notebooks,test]"
	@touch $@

setup: $(VENV)/.ready

# The main job on the bundled examples: the reference solutions (full marks), a learner halfway through (what a
# learner sees), then a whole class graded in the sandbox, with the report's path printed at the end.
demo: setup
	$(PY) -m autograder check solutions
	$(PY) -m autograder check examples/learner || true
	$(PY) -m autograder --select core grade examples/class --out out/demo-class --timeout 3

# lint (ruff: likely bugs), format (ruff format) and types (mypy, lenient) before the tests; config in pyproject.toml
test: setup
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .
	$(PY) -m mypy
	$(PY) -m pytest -q

# The class report as a browser shows it: REPORT_DIR/report.html (made for REPORT_STUDENTS generated students
# unless it is already there, e.g. REPORT_DIR=out/demo-class after `make demo`) and REPORT_DIR/report.png, a
# headless Chromium screenshot (apt-get install -y chromium).
REPORT_DIR ?= out/report-preview
REPORT_STUDENTS ?= 500
CHROMIUM ?= chromium
report-screenshot:
	@test -f $(REPORT_DIR)/report.html || $(PY) tests/report_class.py $(REPORT_DIR) --students $(REPORT_STUDENTS)
	$(CHROMIUM) --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1280,1300 \
	  --screenshot=$(abspath $(REPORT_DIR))/report.png file://$(abspath $(REPORT_DIR))/report.html 2>/dev/null
	@echo "screenshot: $(REPORT_DIR)/report.png"

exercises: setup
	$(PY) -m autograder.instructor.generate

notebooks: setup
	$(PY) -m autograder.instructor.notebooks

# the student starter repository (stubs, public checks, no solutions): push dist/student as the template repo
release: setup
	$(PY) -m autograder release dist/student

check: setup
	$(PY) -m autograder check exercises

clean:
	rm -rf $(VENV) out dist .autograder
