# Understanding Attention — the two commands of the README, and their parts.
#   make book   set up .venv (pinned) and build the HTML book into _build/html
#   make test   set up .venv, then run every test: ruff and mypy, unit and property tests,
#               strict nbval on every notebook (with other kernels; the chapters also as
#               the machine is), the exercise proofs, a clean -W book build, then the tests of the
#               built site
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
PYTHON ?= $(shell command -v python3.11 || command -v python3.12 || command -v python3.13 || command -v python3)
# The pinned environment (requirements/lock.txt) is resolved for Python 3.11 and later and
# hashed for torch's CPU wheels of 3.11-3.13; the package itself needs 3.11 (pyproject.toml).
SUPPORTED_PYTHONS := 3.11 3.12 3.13
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
CHAPTER_NOTEBOOKS := $(wildcard book/*.ipynb)
NOTEBOOKS := $(CHAPTER_NOTEBOOKS) $(wildcard exercises/masters/*.ipynb)

.PHONY: book test setup lint unit unit-package unit-grading unit-setup-cell nbval nbval-native nbval-native-chapters nbval-portable exercises exercises-publish exercises-check \
        exercises-prove book-strict site site-scan browser mathjax grade chapter exercise lock clean \
        python-version release-files lint-workflows run-chapters test-hog mutations-changed

setup: $(STAMP)

# Fail early, with a clear message, on a Python the pinned environment does not support.
python-version:
	@version=$$($(PYTHON) -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null) || \
	    { echo "make: no Python found (tried $(PYTHON)); install one of Python $(SUPPORTED_PYTHONS)"; exit 1; }; \
	case " $(SUPPORTED_PYTHONS) " in *" $$version "*) ;; \
	  *) echo "make: $(PYTHON) is Python $$version; the pinned environment needs one of" \
	          "$(SUPPORTED_PYTHONS). Run e.g. 'make test PYTHON=python3.11'."; exit 1;; esac

# One tool resolves (make lock) and installs: uv, itself pinned (with its hashes) in the lock
# and bootstrapped from it with pip. Every pin of the lock is hash-checked. torch is the CPU
# build (`+cpu`, no CUDA libraries): on Linux it comes from PyTorch's CPU wheel page
# (TORCH_WHEELS) or, where pip's configuration names a local wheel folder (PIP_FIND_LINKS or
# pip's global.find-links, as on the project's machines), from there: the same file.
# The course package and the grading engine (grader/, the distribution attnbook-grader:
# README, "Grading for credit") are installed editable, without dependencies: the lock holds
# both's (the engine's are the course's `exercises` extra).
# The lock is installed as it is (--no-deps: it is complete, resolved by `make lock`) less
# two packages: rfc3987-syntax and its lark, which jsonschema imports for its "iri" format
# when present (jupyter-events asks for jsonschema's format-nongpl extra). Its import
# compiles a grammar: 3.2 s in every process that imports nbformat (pytest, otter, each
# grading server, each exercise kernel), 0.4 s without it; nothing here checks an IRI.
LOCK_LEFT_OUT := rfc3987-syntax lark
TORCH_WHEELS ?= https://download.pytorch.org/whl/cpu/torch/
FIND_LINKS := $(or $(PIP_FIND_LINKS),$(shell $(PYTHON) -m pip config get global.find-links 2>/dev/null),$(TORCH_WHEELS))
UV_BOOTSTRAP := .cache/uv-requirement.txt

# uv's entry of the lock (its pin and hashes), for pip to install with --require-hashes
$(UV_BOOTSTRAP): requirements/lock.txt
	mkdir -p $(@D)
	awk '/^uv==/{keep=1; print; next} keep && /^ /{print; next} {keep=0}' $< > $@
	grep -q '^uv==' $@ || { echo "make: requirements/lock.txt has no uv pin"; exit 1; }

$(STAMP): pyproject.toml grader/pyproject.toml requirements/lock.txt $(UV_BOOTSTRAP) | python-version
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --no-deps --require-hashes -r $(UV_BOOTSTRAP)
	$(VENV)/bin/uv pip install --python $(PY) --quiet --compile-bytecode --require-hashes \
	    --no-deps --find-links $(FIND_LINKS) -r requirements/lock.txt
	$(VENV)/bin/uv pip install --python $(PY) --quiet --no-deps -e . -e grader
	touch $(STAMP)

mathjax: $(STAMP)
	$(PY) -m tools.fetch_mathjax

# The site also serves the package's wheel (dist/), the second place the setup cells try,
# and the launch copies (tools/launch_copies.py: the notebooks as the page reads, in
# _build/launch/ and as the download button's files; LAUNCH_REF: the commit they install).
book: $(STAMP) mathjax
	$(PY) -m tools.check_notebooks
	$(VENV)/bin/jupyter-book build . --config _config.yml --toc _toc.yml $(BOOKFLAGS)
	rm -rf _build/html/dist
	$(PY) -m build --wheel --no-isolation --outdir _build/html/dist . > /dev/null
	rm -rf build
	$(PY) -m tools.launch_copies $(if $(LAUNCH_REF),--ref $(LAUNCH_REF))
	@echo "Book: file://$(CURDIR)/_build/html/index.html"

# The strict build used by `make test`: from scratch, warnings are errors.
book-strict: $(STAMP) mathjax
	rm -rf _build/html _build/.doctrees _build/jupyter_execute
	$(MAKE) --no-print-directory book BOOKFLAGS="-W -n --keep-going"

# ruff (rules in pyproject.toml) on the whole repository, ruff's formatter (88 columns) on
# the library code (the course package and the grading engine), tools, tests and
# benchmarks, mypy on both packages. The chapters (excluded from the style rules: they are
# formatted for the page) get pyflakes' checks: no unused imports or names, no undefined ones.
FORMATTED := src/attnbook grader/src tools tests benchmarks conftest.py
lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff check --select F --no-force-exclude book
	$(VENV)/bin/ruff format --check $(FORMATTED)
	$(VENV)/bin/mypy

unit: unit-package unit-grading unit-setup-cell

# The listed one-line mutants (tools/mutations*.py) of every file changed since BASE's merge
# base (default main; committed or not), each of which some test must catch: a change can
# leave a test blind to a mutant of its file. Not part of `make test` (about 5-60 s a
# mutant); run it before merging a change of the package or the grading engine:
#   make mutations-changed            make mutations-changed BASE=HEAD~3
BASE ?= main
mutations-changed: $(STAMP)
	env $(ONE_THREAD_ENV) $(PY) -m tools.mutations --changed $(BASE)

# (split in three so that `make test` can put them in different lanes: the tests of the
# grading engine and the exercise pipeline grade real submissions and take most of the time)
GRADING_TESTS := tests/test_exercises.py tests/test_grading_engine.py tests/test_grading_rules.py \
    tests/test_solutions.py tests/test_exercise_headers.py tests/test_exercise_public_rule.py \
    tests/test_class_run_grading.py tests/test_variants_class.py
unit-package: $(STAMP)
	$(PY) -m pytest tests -m "not browser and not site" --ignore=tests/test_setup_cell.py \
	    $(addprefix --ignore=,$(GRADING_TESTS))

# (on one thread: in `make test` they share the cores with nbval-native, and the grading
# tests' own tensors are small; a second thread only waits, as in exercises-prove)
unit-grading: $(STAMP)
	env $(ONE_THREAD_ENV) $(PY) -m pytest $(GRADING_TESTS) -m "not browser and not site"

unit-setup-cell: $(STAMP)
	$(PY) -m pytest tests/test_setup_cell.py

# Strict nbval compares every stored output with a fresh run. `make nbval` runs it twice
# against the same stored outputs: as the machine is, and under a second numerical
# configuration with other kernels and another reduction order (PyTorch's non-vectorised
# kernels on one thread, NumPy without its AVX2/AVX-512 paths). An output that passes both
# holds on other CPUs too (CONTRIBUTING.md). Each run lists its ten slowest cells. Each notebook's
# kernel is forked from a process that has loaded PyTorch, NumPy and ipykernel once
# (tools/warm_kernels.py: ~3 s of CPU saved per notebook; ATTNBOOK_COLD_KERNELS=1 turns it off).
NBVAL := $(PY) -m pytest --nbval -p tools.warm_kernels \
    --nbval-sanitize-with tools/nbval_sanitize.cfg --nbval-cell-timeout=300 -p no:cacheprovider -q \
    --durations=10
ONE_THREAD_ENV := OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
PORTABLE_ENV := ATEN_CPU_CAPABILITY=default $(ONE_THREAD_ENV) \
    NPY_DISABLE_CPU_FEATURES="X86_V3 X86_V4 AVX512_ICL AVX512_SPR"

nbval: $(STAMP)
	$(MAKE) --no-print-directory nbval-native
	$(MAKE) --no-print-directory nbval-portable

nbval-native: $(STAMP)
	@echo "--- nbval, as the machine is (OMP_NUM_THREADS=$${OMP_NUM_THREADS:-default})"
	$(NBVAL) $(NOTEBOOKS)

nbval-portable: $(STAMP)
	@echo "--- nbval, second numerical configuration: $(PORTABLE_ENV)"
	env $(PORTABLE_ENV) $(NBVAL) $(NOTEBOOKS)

# `make test`'s first configuration: the chapters. The exercise masters are compared in the
# second configuration (nbval-portable, against outputs stored from the first), and their code
# runs once more in the proofs (exercises-prove grades each reference solution); comparing
# them a third time took ~38 s of the 10-minute budget. `make nbval` still runs both in full.
nbval-native-chapters: $(STAMP)
	@echo "--- nbval, as the machine is (OMP_NUM_THREADS=$${OMP_NUM_THREADS:-default}): the chapters"
	$(NBVAL) $(CHAPTER_NOTEBOOKS)

# Every chapter and every exercise answered with its worked solutions, run as a reader would (no stored
# outputs compared): fails on an error, on stderr output, on a failed grader.check. Not part
# of `make test` (it would double its time); CI's Python matrix and the weekly Colab job run
# it. A subset: make run-chapters RUN="06 ex06".
run-chapters: $(STAMP)
	$(PY) -m tools.run_chapters $(RUN)

# An instructor's private copy of the master notebooks (README, "Grading for credit"):
# `make exercises MASTERS=path` builds from it, and so do exercises-publish, exercises-prove
# and grade (the tool reads ATTNBOOK_MASTERS). The public masters are exercises/masters/.
MASTERS ?=
ifneq ($(strip $(MASTERS)),)
export ATTNBOOK_MASTERS := $(abspath $(MASTERS))
endif

# Student notebooks, public checks and autograder zips, from the master notebooks, into
# _build/exercises/ only; it names the committed copies that a fresh build would change.
# ROSTER=class.csv: also one student notebook per student, each at its variant, into
# _build/exercises/roster/ (the course secret required: README, "Grading for credit").
exercises: $(STAMP)
	$(PY) -m tools.exercises build $(if $(ROSTER),--roster "$(ROSTER)")

# After editing a master: also write the committed copies (exercises/student/NAME.ipynb, a
# page of the book, src/attnbook/exercise_checks/NAME/, installed with the package, and the
# worked solutions exercises/solutions/NAME.ipynb, a page of the book: public masters only).
exercises-publish: $(STAMP)
	$(PY) -m tools.exercises publish

# Reference 100 %, untouched 0, every wrong answer below 100 %, a public check per question
# that flags a listed mistake; two exercises at a time (see tools/exercises.py).
exercises-prove: $(STAMP)
	$(PY) -m tools.exercises prove --jobs 2

# actionlint on the GitHub Actions workflows (which cannot run here); it must also flag the
# deliberately broken sample, so a linter that passes everything fails this step.
lint-workflows: $(STAMP)
	$(PY) -m tools.lint_workflows
	@if $(PY) -m tools.lint_workflows tests/data/broken_workflow.yml >/dev/null; then \
	    echo "lint-workflows: actionlint passed a broken workflow"; exit 1; fi

# Tests of the built site (run after book-strict): the browser tests (marker `browser`), and the
# scan of the built pages for hidden exercise tests (marker `site`). `make site` runs both in one
# pytest run: one start of Chromium and of the local server for all of them
# (tests/conftest.py), one collection. The files collected are the test files that name either
# marker (collecting all of tests/ imports every test module: 28 s of CPU against 18 s for these
# files, measured at load 40); the markers still choose the tests.
SITE_TESTS = $(shell grep -lE 'mark\.(browser|site)\b' tests/test_*.py)
site: $(STAMP)
	$(PY) -m pytest $(SITE_TESTS) -m "browser or site"

browser: $(STAMP)
	$(PY) -m pytest $(SITE_TESTS) -m browser

site-scan: $(STAMP)
	$(PY) -m pytest $(SITE_TESTS) -m site

# `make test` keeps both cores busy: most steps use one. Two phases, each lane about as long
# as the other on a 2-core machine:
#   1. lint, nbval-portable, the package's unit tests  ||  nbval-native-chapters, the grading
#      and exercise-pipeline tests, lint-workflows, book-strict (torch on one thread)
#   2. exercises-prove (two workers)  ||  the site tests (the browser tests and the built-site
#      scan, one pytest run)  ||  the setup-cell test (a third lane: pip and the browser wait on
#      files and pages, the proof's workers on their children, so no core idles while the
#      longest lane finishes)
# Each step prints its wall time and the CPU time of its processes (user + system: bash's
# `time`); a failing step stops the run.
define timed
echo "=== make $(1)"; TIMEFORMAT="=== make $(1): %0R s (CPU %0U s user + %0S s system)"; \
time { $(MAKE) --no-print-directory $(1) || { echo "=== make $(1) FAILED"; exit 1; }; }
endef

# Phase 1's lanes run torch on one thread each (OMP_NUM_THREADS=1): both cores are busy, and a
# second OpenMP thread in either lane would only spin. nbval-native then differs from "as the
# machine is" in the thread count only (it prints which); alone, `make nbval-native` and
# `make unit-package` run as the machine is.
test-lane-portable test-lane-checks: export OMP_NUM_THREADS = 1
test-lane-portable test-lane-checks: export MKL_NUM_THREADS = 1
test-lane-portable: $(STAMP)
	@$(call timed,lint)
	@$(call timed,nbval-portable)
	@$(call timed,unit-package)

test-lane-checks: $(STAMP)
	@$(call timed,nbval-native-chapters)
	@$(call timed,unit-grading)
	@$(call timed,lint-workflows)
	@$(call timed,book-strict)

test-lane-prove: $(STAMP)
	@$(call timed,exercises-prove)

test-lane-site: $(STAMP)
	@$(call timed,site)

test-lane-setup-cell: $(STAMP)
	@$(call timed,unit-setup-cell)

test: $(STAMP)
	@start=$$(date +%s); \
	echo "=== phase 1: lint, nbval-portable, unit-package || nbval-native-chapters, unit-grading, lint-workflows, book-strict"; \
	$(MAKE) --no-print-directory -j2 --output-sync=target test-lane-portable test-lane-checks \
	    || { echo "=== phase 1 FAILED"; exit 1; }; \
	echo "=== phase 1: $$(( $$(date +%s) - start )) s"
	@start=$$(date +%s); echo "=== phase 2: exercises-prove || site (browser, site-scan) || unit-setup-cell"; \
	$(MAKE) --no-print-directory -j3 --output-sync=target test-lane-prove test-lane-site \
	    test-lane-setup-cell \
	    || { echo "=== phase 2 FAILED"; exit 1; }; \
	echo "=== phase 2: $$(( $$(date +%s) - start )) s"

# CI beside a CPU hog (tools/ci_hog.sh): a clean clone of HEAD runs `bash .ci/run` while
# stress-ng keeps both cores busy; HOG_RUNS runs in a row (default 1). It takes the whole machine
# for seventeen to thirty-five minutes a run (the run at 0.4-0.6 of its idle speed): by hand, on an
# otherwise idle machine.
HOG_RUNS ?= 1
test-hog:
	bash tools/ci_hog.sh $(HOG_RUNS)

# Instructor: grade a folder of submitted .ipynb files to a CSV, with beside it a report of
# what the class got wrong (OUT stem + -report.txt). Writes nothing into the repository.
#   make grade EXERCISE=ex01_attention SUBMISSIONS=path/to/folder [OUT=grades.csv] [JOBS=2]
#   ROSTER=class.csv TITLE="Exercise 1 (123)": names and ids for the LMS gradebook (OUT stem + -canvas.csv)
#   UNSAFE=1: practice grading where the kernel isolates nothing (never for credit)
grade: $(STAMP)
	$(PY) -m tools.exercises grade $(EXERCISE) $(SUBMISSIONS) --out $(or $(OUT),grades-$(EXERCISE).csv) \
	    --jobs $(or $(JOBS),1) $(if $(ROSTER),--roster "$(ROSTER)") $(if $(TITLE),--title "$(TITLE)") \
	    $(if $(filter 1,$(UNSAFE)),--unsafe)

# Maintainer: after changing the version in pyproject.toml (README, "Cutting a release").
release-files: $(STAMP)
	$(PY) -m tools.release_files
	$(MAKE) --no-print-directory exercises-publish

# Contributor: scaffold a chapter or an exercise with the standard opening.
#   make chapter NAME=02_scaling TITLE="Scaling"   /   make exercise NAME=ex02_scaling TITLE="Scaling"
chapter: $(STAMP)
	$(PY) -m tools.scaffold chapter $(NAME) "$(TITLE)"

exercise: $(STAMP)
	$(PY) -m tools.scaffold exercise $(NAME) "$(TITLE)"

# Re-pin every package after a change of pyproject.toml: uv resolves pyproject.toml's `dev`
# extra under requirements/constraints.txt (torch: the CPU build on Linux) for every Python
# from 3.11 on and every platform at once (--universal), with the sha256 of every file.
# Existing pins are kept unless the requirements force a change; `--upgrade` is yours to add
# (make lock LOCKFLAGS=--upgrade). The checkout itself is left out. tools/lock_torch.py then
# gives Linux's torch entry the hashes PyTorch's CPU index lists for Python 3.11-3.13
# (requirements/torch-cpu.sha256): uv can hash only the wheels it sees, and it must have seen
# one of those.
LOCK_VENV := .cache/lock-venv
lock: $(UV_BOOTSTRAP)
	test -x $(LOCK_VENV)/bin/uv || { $(PYTHON) -m venv $(LOCK_VENV) && \
	    $(LOCK_VENV)/bin/pip install --quiet --no-deps --require-hashes -r $(UV_BOOTSTRAP); }
	$(LOCK_VENV)/bin/uv pip compile --quiet --universal --python-version 3.11 --generate-hashes \
	    --extra dev -c requirements/constraints.txt --find-links $(FIND_LINKS) \
	    --no-emit-package attnbook $(addprefix --no-emit-package ,$(LOCK_LEFT_OUT)) \
	    --custom-compile-command "make lock" $(LOCKFLAGS) \
	    -o requirements/lock.txt pyproject.toml
	$(LOCK_VENV)/bin/python -m tools.lock_torch requirements/lock.txt requirements/torch-cpu.sha256

.PHONY: dist executed-notebooks

# Maintainer: the sdist and the wheel in dist/, checked by twine (the release workflow runs it).
dist: $(STAMP)
	rm -rf dist
	$(PY) -m build --outdir dist .
	$(VENV)/bin/twine check --strict dist/*
	@ls -l dist

# CI, after a failure: every chapter and exercise master executed afresh, errors kept in place
# (never fails itself), into _build/reports/executed/ for the workflow to upload.
executed-notebooks: $(STAMP)
	mkdir -p _build/reports/executed
	-$(VENV)/bin/jupyter nbconvert --to notebook --execute --allow-errors \
	    --ExecutePreprocessor.timeout=900 --output-dir _build/reports/executed $(NOTEBOOKS)

clean:
	rm -rf _build .cache dist
