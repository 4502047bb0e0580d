# Two commands do all set-up on a fresh machine: `make lab` (open the course) and `make test`.
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.course-installed
# Kernels started by Jupyter and nbgrader must be the course's Python, not another one on PATH.
export PATH := $(abspath $(BIN)):$(PATH)

.PHONY: help install sandbox lab test test-quick lint release grade expected clean

help:
	@echo "make lab      install if needed, copy new notebooks into my-work/ (your own copy), open JupyterLab on it"
	@echo "make test     install if needed, then run the whole test suite on every core (what CI runs)"
	@echo "make test-quick  unit tests of course_lib and autograde only (no notebook runs, no grading)"
	@echo "make release  regenerate notebooks/ from solutions/ (instructors)"
	@echo "make grade ASSIGNMENT=01_positional_encoding SUBMISSIONS=dir OUT=dir [WORKERS=n] [DASK=tcp://host:8786]"

LAB_OVERRIDES := {"@jupyterlab/apputils-extension:notification": {"fetchNews": "false", "checkForUpdates": false}}

$(STAMP): requirements.txt pyproject.toml Makefile
	@command -v $(PYTHON) >/dev/null || { echo "$(PYTHON) not found: install Python 3.11 or run 'make PYTHON=/path/to/python3.11 ...'"; exit 1; }
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	sed '/# no-deps$$/d' requirements.txt > $(VENV)/requirements-with-deps.txt
	$(BIN)/python -m pip install --quiet -r $(VENV)/requirements-with-deps.txt
	$(BIN)/python -m pip install --quiet --no-deps $$(sed -n 's/^\([A-Za-z0-9][^ ]*\) *# no-deps$$/\1/p' requirements.txt)
	$(BIN)/python -m pip install --quiet --no-deps -e .
	@# The course runs offline: JupyterLab should neither ask to fetch news nor check for updates.
	mkdir -p $(VENV)/share/jupyter/lab/settings
	echo '$(LAB_OVERRIDES)' > $(VENV)/share/jupyter/lab/settings/overrides.json
	@touch $@

install: $(STAMP)

# Grading runs each student's kernel in a bubblewrap sandbox (autograde/sandbox.py). As root with apt
# (CI, a grading server) it is installed here; otherwise the message says how.
sandbox:
	@command -v bwrap >/dev/null || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "installing bubblewrap (bwrap) for the grader's sandbox"; \
	    { apt-get install -y -q bubblewrap || { apt-get update -q && apt-get install -y -q bubblewrap; }; } >/dev/null; \
	  else \
	    echo "grading needs bubblewrap: sudo apt-get install bubblewrap (Debian, Ubuntu) or sudo dnf install bubblewrap"; \
	    exit 1; \
	  fi; }

# Jupyter refuses to run as root unless told to (containers, CI machines).
ALLOW_ROOT := $(if $(filter 0,$(shell id -u)),--allow-root)

# Students work in my-work/ (git-ignored), never in notebooks/, which `make release` and `git pull` rewrite;
# course_lib.workspace copies what is new and never overwrites a file (updates arrive as .new copies).
WORK ?= my-work

lab: $(STAMP)
	$(BIN)/python -m course_lib.workspace --work "$(WORK)"
	$(BIN)/jupyter lab --ServerApp.root_dir="$(WORK)" $(ALLOW_ROOT) $(LAB_ARGS)

# pytest-xdist: one worker per core; tests that share an expensive fixture (one assignment's grading batch)
# carry the same xdist_group and run on one worker.
WORKERS ?= auto

test: $(STAMP) sandbox
	$(BIN)/ruff check .
	COURSE_FAST=1 $(BIN)/python -m pytest -n $(WORKERS) --dist loadgroup $(PYTEST_ARGS)

test-quick: $(STAMP)
	$(BIN)/ruff check .
	COURSE_FAST=1 $(BIN)/python -m pytest -n $(WORKERS) -m "not notebooks and not grading" $(PYTEST_ARGS)

lint: $(STAMP)
	$(BIN)/ruff check .

expected: $(STAMP)
	$(BIN)/python -m autograde.expected

release: $(STAMP)
	$(BIN)/python -m autograde.release

grade: $(STAMP) sandbox
	@if [ -z "$(ASSIGNMENT)" ] || [ -z "$(SUBMISSIONS)" ] || [ -z "$(OUT)" ]; then \
		echo "usage: make grade ASSIGNMENT=01_positional_encoding SUBMISSIONS=dir OUT=dir [WORKERS=n] [DASK=tcp://host:8786]"; exit 2; fi
	$(BIN)/python -m autograde.grade --assignment "$(ASSIGNMENT)" --submissions "$(SUBMISSIONS)" --out "$(OUT)" \
		$(if $(filter-out auto,$(WORKERS)),--workers $(WORKERS)) $(if $(DASK),--dask-scheduler $(DASK)) $(GRADE_ARGS)

clean:
	rm -rf .nbgrader .pytest_cache .ruff_cache
	find . -name __pycache__ -not -path './$(VENV)/*' -prune -exec rm -rf {} +
