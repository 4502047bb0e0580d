# Two commands do all set-up on a fresh machine: `make lab` (open the course) and `make test`.
include student.mk

comma := ,

.PHONY: help install sandbox browser lab submit formgrader test test-quick lint release student-kit grade export expected bench clean

help:
	@echo "make lab      install if needed, copy new notebooks into my-work/ (your own copy), open JupyterLab on it"
	@echo "make submit STUDENT=id  check your notebooks in my-work/ and pack them into submissions/<id>.zip to hand in"
	@echo "make test     install if needed, then run the whole test suite on every core (what CI runs)"
	@echo "make test-quick  the quick unit tests (no notebook runs, no grading, none marked thorough), under 2 minutes"
	@echo "make release  regenerate notebooks/ from solutions/ (instructors)"
	@echo "make student-kit [OUT=dist/student-kit] [GIVE=01,02]  what students get instead of the repository: OUT/ and"
	@echo "              OUT.zip, without answers; GIVE hands out the course_lib.layers blocks of assignments that are due"
	@echo "make formgrader [ROSTER=roster.csv]  the instructor's JupyterLab on the repository: nbgrader's formgrader"
	@echo "           with every assignment; ROSTER gives the gradebook's students their names (else their id)"
	@echo "make grade ASSIGNMENT=01_positional_encoding SUBMISSIONS=dir OUT=dir [WORKERS=n] [DASK=tcp://host:8786]"
	@echo "           [ROSTER=roster.csv] (SUBMISSIONS holds <student>/ folders and/or the <student>.zip archives of"
	@echo "           make submit; ROSTER, the file make export reads, names the students in the gradebook)"
	@echo "make export FORMAT=canvas|moodle|csv [OUT=file] [ROSTER=roster.csv] [ASSIGNMENTS=01_positional_encoding,...]"
	@echo "           the gradebook's scores as a file Canvas or Moodle imports, or one row per student and assignment"
	@echo "make bench [BENCH_ARGS=...]  NER fine-tuning examples/s: the course's Keras step against HF transformers on PyTorch"

# A Debian package a target needs: $(1) the command it provides, $(2) the package, $(3) what it is for, $(4) how
# to install it by hand. As root with apt (CI, a grading server) it is installed; otherwise the message says how.
define debian_package
	@command -v $(1) >/dev/null || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "installing $(2) for $(3)"; \
	    { apt-get install -y -q $(2) || { apt-get update -q && apt-get install -y -q $(2); }; } >/dev/null; \
	  else \
	    echo "$(2) is needed for $(3): $(4)"; \
	    exit 1; \
	  fi; }
endef

# Grading runs each student's kernel in a bubblewrap sandbox (autograde/sandbox.py).
sandbox:
	$(call debian_package,bwrap,bubblewrap,the grader's sandbox,sudo apt-get install bubblewrap (Debian$(comma) Ubuntu) or sudo dnf install bubblewrap)

# The browser tests (tests/test_browser.py) drive Debian's Chromium through the playwright package, which
# never downloads a browser of its own.
browser:
	$(call debian_package,chromium,chromium,the browser tests,sudo apt-get install chromium (Debian))

# pytest-xdist: one worker per core; tests that share an expensive fixture (one assignment's grading batch)
# carry the same xdist_group and run on one worker.
WORKERS ?= auto
# nbval validates every solution notebook (one item per code cell, errors only: --nbval-lax) in the same pytest
# run, in fast mode and offline (tests/conftest.py sets both before any kernel starts, groups one notebook's
# cells on one worker, then grades its kernel). The notebooks come first: the longest groups start first.
# Student notebooks are run in the browser tests instead: they fail by design.
NBVAL := --nbval-lax --nbval-current-env --nbval-cell-timeout=600 $(sort $(wildcard solutions/*/*.ipynb)) tests

# A worker that dies (the machine's OOM killer, a crash in native code, tests/memory_guard.py's last resort) ends the
# run at once, naming its test: restarted, xdist would run that test's group again on the new worker, and its
# loadgroup scheduler can wait forever after a crash (pytest-xdist issue 1378).
test: $(STAMP) sandbox browser
	$(BIN)/ruff check .
	COURSE_FAST=1 $(BIN)/python -m pytest -n $(WORKERS) --dist loadgroup --max-worker-restart=0 $(NBVAL) $(PYTEST_ARGS)

test-quick: $(STAMP)
	$(BIN)/ruff check .
	COURSE_FAST=1 $(BIN)/python -m pytest -n $(WORKERS) -m "not notebooks and not grading and not thorough" $(PYTEST_ARGS)

lint: $(STAMP)
	$(BIN)/ruff check .

# COURSE=dir: grading state (gradebook, submitted/, autograded/, feedback/) in another nbgrader course folder than
# the repository, one that holds the course's solutions/ (autograde/course.py: course_root). COURSE_DB_URL (in the
# environment) puts the gradebook in another database, PostgreSQL for instance (INSTRUCTORS.md).
COURSE_ENV := $(if $(COURSE),COURSE_ROOT="$(abspath $(COURSE))")

# The instructor's Lab, rooted at the repository: nbgrader needs the course root (the repository: solutions/,
# notebooks/, .nbgrader/) inside the server's root to open source and release notebooks from the formgrader.
# jupyter/instructor/nbgrader_config.py gives it the course's configuration and an exchange folder
# (.nbgrader/exchange, or EXCHANGE=dir); jupyter/instructor/data (JUPYTER_PATH) has the formgrader's pages typeset
# equations with the server's MathJax instead of a CDN's; the gradebook first records every assignment with its points, and names its
# students from ROSTER=roster.csv (else by their id; a malformed roster stops here, before the Lab starts).
formgrader: $(STAMP)
	$(COURSE_ENV) $(BIN)/python -m autograde.gradebook $(if $(ROSTER),--roster "$(abspath $(ROSTER))")
	JUPYTER_CONFIG_PATH="$(abspath jupyter/instructor)$${JUPYTER_CONFIG_PATH:+:$$JUPYTER_CONFIG_PATH}" \
	  JUPYTER_PATH="$(abspath jupyter/instructor/data)$${JUPYTER_PATH:+:$$JUPYTER_PATH}" \
	  $(if $(EXCHANGE),COURSE_EXCHANGE="$(abspath $(EXCHANGE))") $(COURSE_ENV) \
	  $(BIN)/jupyter lab --ServerApp.root_dir="$(or $(abspath $(COURSE)),$(CURDIR))" $(ALLOW_ROOT) $(LAB_ARGS)

expected: $(STAMP)
	$(BIN)/python -m autograde.expected

release: $(STAMP)
	$(BIN)/python -m autograde.release

# What students get instead of the repository (autograde/student_kit/): OUT/ and OUT.zip with the released
# notebooks, course_lib and student.mk as the Makefile; no solutions, references or hidden tests. course_lib/layers.py
# keeps only the answers of the assignments in GIVE (those past their deadline). OUT's default is set here, not
# globally: `make grade` requires an OUT of its own.
student-kit: $(STAMP)
	$(BIN)/python -m autograde.student_kit --out "$(or $(OUT),dist/student-kit)" $(if $(GIVE),--give "$(GIVE)")

grade: $(STAMP) sandbox
	@if [ -z "$(ASSIGNMENT)" ] || [ -z "$(SUBMISSIONS)" ] || [ -z "$(OUT)" ]; then \
		echo "usage: make grade ASSIGNMENT=01_positional_encoding SUBMISSIONS=dir OUT=dir [WORKERS=n] [DASK=tcp://host:8786] [ROSTER=roster.csv]"; exit 2; fi
	$(COURSE_ENV) $(BIN)/python -m autograde.grade --assignment "$(ASSIGNMENT)" --submissions "$(SUBMISSIONS)" --out "$(OUT)" \
		$(if $(filter-out auto,$(WORKERS)),--workers $(WORKERS)) $(if $(DASK),--dask-scheduler $(DASK)) \
		$(if $(ROSTER),--roster "$(abspath $(ROSTER))") $(GRADE_ARGS)

# The gradebook's scores as a file a learning platform imports (autograde/export.py; INSTRUCTORS.md, "Grades for a
# learning platform"). OUT defaults to grades-<FORMAT>.csv; EXPORT_ARGS passes more, e.g. --canvas-ids.
export: $(STAMP)
	@if [ -z "$(FORMAT)" ]; then \
		echo "usage: make export FORMAT=canvas|moodle|csv [OUT=file] [ROSTER=roster.csv] [ASSIGNMENTS=01_positional_encoding,...]"; exit 2; fi
	$(COURSE_ENV) $(BIN)/python -m autograde.export --format "$(FORMAT)" $(if $(OUT),--out "$(OUT)") \
		$(if $(ROSTER),--roster "$(ROSTER)") $(if $(ASSIGNMENTS),--assignments "$(ASSIGNMENTS)") $(EXPORT_ARGS)

# Examples per second of assignment 06's NER fine-tuning step against Hugging Face transformers on PyTorch
# (bench/finetune_throughput.py). bench/requirements.txt (transformers and what it needs beyond the course's
# packages; torch is the course's own, for assignment 08) goes into $(BENCH_SITE) with --no-deps, not into the
# course's site-packages: only the benchmark's PyTorch process puts that folder on its path.
BENCH_SITE := $(VENV)/bench-site
BENCH_STAMP := $(VENV)/.bench-stamp

$(BENCH_STAMP): bench/requirements.txt | $(STAMP)
	rm -rf $(BENCH_SITE)
	$(BIN)/python -m pip install --quiet --no-deps --target $(BENCH_SITE) -r bench/requirements.txt
	@touch $@

bench: $(STAMP) $(BENCH_STAMP)
	$(BIN)/python bench/finetune_throughput.py $(BENCH_ARGS)

clean:
	rm -rf .nbgrader .pytest_cache .ruff_cache
	find . -name __pycache__ -not -path './$(VENV)/*' -prune -exec rm -rf {} +
