# The students' make targets: set-up and `make lab`. The course's Makefile includes this file, and the
# student kit (make student-kit) ships it as its Makefile, so both install and open the course the same way.
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.course-installed
# Kernels started by Jupyter and nbgrader must be the course's Python, not another one on PATH.
export PATH := $(abspath $(BIN)):$(PATH)

LAB_OVERRIDES := {"@jupyterlab/apputils-extension:notification": {"fetchNews": "false", "checkForUpdates": false}}

$(STAMP): requirements.txt pyproject.toml $(MAKEFILE_LIST)
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

# Jupyter refuses to run as root unless told to (containers, CI machines).
ALLOW_ROOT := $(if $(filter 0,$(shell id -u)),--allow-root)

# Students work in my-work/ (git-ignored), never in notebooks/, which `make release` and `git pull` rewrite;
# course_lib.workspace copies what is new and never overwrites a file (updates arrive as .new copies).
WORK ?= my-work

lab: $(STAMP)
	$(BIN)/python -m course_lib.workspace --work "$(WORK)"
	$(BIN)/jupyter lab --ServerApp.root_dir="$(WORK)" $(ALLOW_ROOT) $(LAB_ARGS)
