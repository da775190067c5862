# Understanding Attention — the two commands of the README, and their parts.
#   make book   set up .venv (pinned) and build the HTML book into _build/html
#   make test   set up .venv, then run every test: the linter and type checker, unit and
#               property tests, strict nbval on every notebook, the exercise proofs, a clean
#               -W book build and the browser test
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
NOTEBOOKS := $(wildcard book/*.ipynb) $(wildcard exercises/masters/*.ipynb)

.PHONY: book test setup lint unit nbval exercises exercises-check exercises-prove book-strict browser \
        mathjax grade chapter exercise lock clean

setup: $(STAMP)

$(STAMP): pyproject.toml requirements/lock.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet -c requirements/lock.txt pip
	$(PY) -m pip install --quiet -c requirements/lock.txt -e ".[dev]"
	touch $(STAMP)

mathjax: $(STAMP)
	$(PY) tools/fetch_mathjax.py

book: $(STAMP) mathjax
	$(PY) tools/check_notebooks.py
	$(VENV)/bin/jupyter-book build . --config _config.yml --toc _toc.yml $(BOOKFLAGS)
	@echo "Book: file://$(CURDIR)/_build/html/index.html"

# The strict build used by `make test`: from scratch, warnings are errors.
book-strict: $(STAMP) mathjax
	rm -rf _build/html _build/.doctrees _build/jupyter_execute
	$(MAKE) --no-print-directory book BOOKFLAGS="-W -n --keep-going"

# ruff (rules in pyproject.toml) on the whole repository, mypy on src/.
lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy

unit: $(STAMP)
	$(PY) -m pytest tests -m "not browser"

nbval: $(STAMP)
	$(PY) -m pytest --nbval --nbval-sanitize-with tools/nbval_sanitize.cfg \
	    --nbval-cell-timeout=300 -p no:cacheprovider $(NOTEBOOKS)

# Student notebooks, public checks and autograder zips, from the master notebooks.
exercises: $(STAMP)
	$(PY) tools/exercises.py build

exercises-prove: $(STAMP)
	$(PY) tools/exercises.py prove

browser: $(STAMP)
	$(PY) -m pytest tests -m browser

TEST_STEPS := lint unit nbval exercises-prove book-strict browser
test: $(STAMP)
	@for step in $(TEST_STEPS); do \
	    start=$$(date +%s); \
	    echo "=== make $$step"; \
	    $(MAKE) --no-print-directory $$step || { echo "=== make $$step FAILED"; exit 1; }; \
	    echo "=== make $$step: $$(( $$(date +%s) - start )) s"; \
	done

# Instructor: grade a folder of submitted .ipynb files to a CSV.
#   make grade EXERCISE=ex01_attention SUBMISSIONS=path/to/folder [OUT=grades.csv]
grade: $(STAMP)
	$(PY) tools/exercises.py grade $(EXERCISE) $(SUBMISSIONS) --out $(or $(OUT),grades-$(EXERCISE).csv)

# Contributor: scaffold a chapter or an exercise with the standard opening.
#   make chapter NAME=02_scaling TITLE="Scaling"   /   make exercise NAME=ex02_scaling TITLE="Scaling"
chapter: $(STAMP)
	$(PY) tools/scaffold.py chapter $(NAME) "$(TITLE)"

exercise: $(STAMP)
	$(PY) tools/scaffold.py exercise $(NAME) "$(TITLE)"

# Re-pin every package after a change of pyproject.toml: pip-compile (pip-tools, itself pinned
# by the lock) resolves pyproject.toml's `dev` extra, under requirements/constraints.txt (torch),
# with this project's Python and pip's own configuration (the find-links that hold the torch
# CPU wheel). Existing pins are kept unless the requirements force a change; `--upgrade` is
# yours to add. Two edits after it: the checkout's own line goes (it would name a local
# path), and torch's local label `+cpu` is dropped: `torch==2.13.0` still selects that wheel.
LOCK_VENV := .cache/lock-venv
lock:
	test -x $(LOCK_VENV)/bin/pip-compile || { $(PYTHON) -m venv $(LOCK_VENV) && \
	    $(LOCK_VENV)/bin/pip install --quiet -c requirements/lock.txt pip pip-tools; }
	CUSTOM_COMPILE_COMMAND="make lock" $(LOCK_VENV)/bin/pip-compile --quiet --extra dev \
	    --strip-extras --allow-unsafe --no-emit-index-url --no-emit-find-links --no-emit-trusted-host \
	    --annotation-style line -c requirements/constraints.txt -o requirements/lock.txt pyproject.toml
	sed -i -e '/^attnbook @ /d' -e 's/^\(torch==[0-9.]*\)+cpu /\1 /' requirements/lock.txt

clean:
	rm -rf _build .cache
