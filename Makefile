# The README's two commands: `make demo` and `make test`. Both install what they need.
PYTHON ?= python3
PIP := $(PYTHON) -m pip
ARENA := ../shared/data/arena-140k/battles.csv.gz
HOST ?= 127.0.0.1
PORT ?= 8000
SAMPLE := data/sample/battles.jsonl.gz

.PHONY: install install-torch install-system install-test demo test lint bench

# PyTorch's CPU build first: sentence-transformers would otherwise pull a CUDA build (~6 GB).
# Elsewhere, TORCH="torch --index-url <PyTorch's CPU wheel index>" does the same.
TORCH ?= torch==2.13.0

install-torch:
	$(PIP) install --quiet --disable-pip-version-check $(TORCH)

install: install-torch
	$(PIP) install --quiet --disable-pip-version-check -e .

# The real parts the tests use: a redis-server and a headless Chromium (Debian packages).
SYSTEM_PACKAGES := redis-server chromium fonts-dejavu-core

install-system:
	@missing=""; for p in $(SYSTEM_PACKAGES) $(EXTRA_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
		echo "installing$$missing (apt-get)" >&2; \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	fi

install-test: install-torch install-system
	$(PIP) install --quiet --disable-pip-version-check -e '.[test]'

## demo: install; the real Arena leaderboard (or the sample's); then a simulated arena,
## fitted, reported, and served with the web page at http://127.0.0.1:8000/
demo: install
	@if [ -f $(ARENA) ]; then data=$(ARENA); else data=$(SAMPLE); fi; \
	echo "plb leaderboard $$data" >&2; plb leaderboard $$data
	plb serve --demo --demo-dir out/demo --host $(HOST) --port $(PORT)

## lint: ruff and mypy
lint:
	ruff check .
	ruff format --check .
	mypy

## test: install everything, lint, run the whole test suite
test: install-test lint
	$(PYTHON) -m pytest -q

## bench: the benchmarks of bench/, results in bench/RESULTS.md
bench: EXTRA_PACKAGES := wrk
bench: install-test
	$(PYTHON) -m bench.run
