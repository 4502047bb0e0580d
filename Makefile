# Two commands do all set-up on a fresh machine: `make lab` (open the course) and `make test`.
include student.mk

.PHONY: help install sandbox lab test test-quick lint release grade expected clean

help:
	@echo "make lab      install if needed, copy new notebooks into my-work/ (your own copy), open JupyterLab on it"
	@echo "make test     install if needed, then run the whole test suite on every core (what CI runs)"
	@echo "make test-quick  unit tests of course_lib and autograde only (no notebook runs, no grading)"
	@echo "make release  regenerate notebooks/ from solutions/ (instructors)"
	@echo "make grade ASSIGNMENT=01_positional_encoding SUBMISSIONS=dir OUT=dir [WORKERS=n] [DASK=tcp://host:8786]"

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
