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
	@# jsonschema's optional IRI format check (rfc3987-syntax, which jupyter-events pulls in) builds an Earley parser
	@# when imported: about 3 s of CPU in every process that reads a notebook (nbformat imports jsonschema), so every
	@# Jupyter server, nbgrader command and grading process. Nothing the course validates is an IRI; without the
	@# package jsonschema leaves that one format unchecked.
	$(BIN)/python -m pip uninstall --quiet --yes rfc3987-syntax
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

# The students' Lab keeps nbgrader's Validate button and hides its instructor tools (formgrader, create
# assignment, assignment and course lists): jupyter/student/ is put first on JUPYTER_CONFIG_PATH for this
# launch only, because the instructor's Lab (make formgrader) runs from the same environment.
STUDENT_JUPYTER_CONFIG := $(abspath jupyter/student)

lab: $(STAMP)
	$(BIN)/python -m course_lib.workspace --work "$(WORK)"
	JUPYTER_CONFIG_PATH="$(STUDENT_JUPYTER_CONFIG)$${JUPYTER_CONFIG_PATH:+:$$JUPYTER_CONFIG_PATH}" \
	  $(BIN)/jupyter lab --ServerApp.root_dir="$(WORK)" $(ALLOW_ROOT) $(LAB_ARGS)

# Handing in: each notebook in $(WORK)/ is run as a copy in a fresh kernel (demo cells skipped, as in grading),
# a summary says where each exercise stands, and the saved notebooks are packed into submissions/<id>.zip
# (course_lib/submit.py; OUT=dir for another folder). The student's files are only read.
submit: $(STAMP)
	@if [ -z "$(STUDENT)" ]; then echo "usage: make submit STUDENT=<your student id> [WORK=$(WORK)] [OUT=submissions]"; exit 2; fi
	$(BIN)/python -m course_lib.submit --student="$(STUDENT)" --work "$(WORK)" $(if $(OUT),--out "$(OUT)") $(SUBMIT_ARGS)
