# The README's two commands: `make demo` and `make test`. Both install what they need.
PYTHON ?= python3
PIP := $(PYTHON) -m pip
ARENA := ../shared/data/arena-140k/battles.csv.gz
SAMPLE := data/sample/battles.jsonl.gz

.PHONY: install install-torch install-test demo test lint bench

# PyTorch's CPU build first: sentence-transformers would otherwise pull a CUDA build (~6 GB).
# Elsewhere, TORCH="torch --index-url <PyTorch's CPU wheel index>" does the same.
TORCH ?= torch==2.13.0

install-torch:
	$(PIP) install --quiet --disable-pip-version-check $(TORCH)

install: install-torch
	$(PIP) install --quiet --disable-pip-version-check -e .

install-test: install-torch
	$(PIP) install --quiet --disable-pip-version-check -e '.[test]'

## demo: install; the real Arena leaderboard (or the sample's); a simulated arena, fitted and
## reported; a ranking recommended from five sample queries
demo: install
	@if [ -f $(ARENA) ]; then data=$(ARENA); else data=$(SAMPLE); fi; \
	echo "plb leaderboard $$data" >&2; plb leaderboard $$data
	plb simulate --out out/sim
	plb fit out/sim/battles.jsonl.gz --truth out/sim/truth.json --out out/fit
	plb report out/fit --out out/report.html
	plb recommend out/fit --queries data/sample/queries.txt

## lint: ruff and mypy
lint:
	ruff check .
	ruff format --check .
	mypy

## test: install everything, lint, run the whole test suite
test: install-test lint
	$(PYTHON) -m pytest -q

## bench: the benchmarks of bench/, results in bench/RESULTS.md
bench: install-test
	$(PYTHON) -m bench.run
