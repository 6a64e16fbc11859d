# The README's two commands: `make demo` and `make test`. Both create the project
# environment .venv/ (python3 -m venv) and install into it from the lock, never into the
# system interpreter. `make lock` refreshes the lock.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip --disable-pip-version-check
LOCK := requirements/lock.txt
# Every command below finds plb, ruff and mypy in the environment first.
export PATH := $(abspath $(VENV))/bin:$(PATH)
ARENA := ../shared/data/arena-140k/battles.csv.gz
HOST ?= 127.0.0.1
PORT ?= 8000
DEMO_USERS ?= 300
DEMO_DIR ?= out/demo
SAMPLE := data/sample/battles.jsonl.gz

.PHONY: venv install install-torch install-system install-test demo test lint audit bench lock clean-venv

# PyTorch's CPU build first: sentence-transformers would otherwise pull a CUDA build (~6 GB).
# Elsewhere, TORCH="torch==2.13.0+cpu --index-url <PyTorch's CPU wheel index>" does the same.
TORCH ?= torch==2.13.0

$(PY):
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || \
		{ echo "make: $(PYTHON) is older than Python 3.11 (set PYTHON=python3.11)" >&2; exit 2; }
	@$(PYTHON) -m venv $(VENV) || \
		{ echo "make: '$(PYTHON) -m venv' failed (on Debian: apt-get install python3-venv)" >&2; exit 2; }
	@$(PIP) install --quiet -c $(LOCK) --upgrade pip

venv: $(PY)

install-torch: $(PY)
	$(PIP) install --quiet -c $(LOCK) $(TORCH)

install: install-torch
	$(PIP) install --quiet -c $(LOCK) -e .

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
	$(PIP) install --quiet -c $(LOCK) -e '.[test,dask]'

## demo: install; the real Arena leaderboard (or the sample's); then a simulated arena,
## fitted, reported, and served with the web page at http://127.0.0.1:8000/
demo: install
	@if [ -f $(ARENA) ]; then data=$(ARENA); else data=$(SAMPLE); fi; \
	echo "plb leaderboard $$data" >&2; plb leaderboard $$data
	plb serve --demo --demo-dir $(DEMO_DIR) --users $(DEMO_USERS) --host $(HOST) --port $(PORT)

## lint: ruff, mypy, deptry (every import declared, every dependency used), and the
## import contracts of pyproject.toml's [tool.importlinter] (imports point down the layers)
lint:
	ruff check .
	ruff format --check .
	mypy
	deptry .
	lint-imports

## audit: known vulnerabilities of the installed packages (pip-audit). Fails on one, unless
## .pip-audit-ignore lists its id with a reason; only warns when the vulnerability service
## cannot be reached or cannot audit some packages.
audit:
	@ignore=$$(sed 's/#.*//' .pip-audit-ignore | awk 'NF { printf " --ignore-vuln %s", $$1 }'); \
	out=$$(mktemp); err=$$(mktemp); trap 'rm -f "$$out" "$$err"' EXIT; \
	$(PY) -m pip_audit --progress-spinner off --skip-editable --desc on $$ignore >"$$out" 2>"$$err"; \
	status=$$?; skipped=$$(grep -c "could not be audited" "$$out"); \
	if [ $$status -ne 0 ] && grep -q "known vulnerabilit" "$$err"; then \
		cat "$$out" "$$err" >&2; \
		echo "audit: vulnerable packages above; to accept one, add its id and why to .pip-audit-ignore" >&2; \
		exit 1; \
	elif [ $$status -ne 0 ]; then \
		tail -n 3 "$$err" >&2; \
		echo "audit: WARNING: pip-audit could not reach its vulnerability service; nothing audited" >&2; \
	elif [ $$skipped -gt 0 ]; then \
		cat "$$err"; \
		echo "audit: WARNING: $$skipped packages could not be audited (not found by the vulnerability service)" >&2; \
	else \
		cat "$$err"; \
	fi

## test: install everything, lint, audit the dependencies, run the whole test suite on
## TEST_WORKERS processes (pytest-xdist; tests marked xdist_group share one worker)
TEST_WORKERS ?= 2
test: install-test lint audit
	$(PY) -m pytest -q -n $(TEST_WORKERS) --dist loadgroup

## bench: the benchmarks of bench/, results in bench/RESULTS.md
bench: EXTRA_PACKAGES := wrk
bench: install-test
	$(PY) -m bench.run

## lock: resolve pyproject.toml (every extra) afresh in a throw-away environment, and
## write every resolved version to requirements/lock.txt, which both commands install from
lock:
	rm -rf .venv-lock
	$(PYTHON) -m venv .venv-lock
	.venv-lock/bin/python -m pip install --quiet --disable-pip-version-check --upgrade pip
	.venv-lock/bin/python -m pip install --quiet --disable-pip-version-check $(TORCH)
	.venv-lock/bin/python -m pip install --quiet --disable-pip-version-check -e '.[test,dask]'
	{ echo "# Every package of the project environment (all extras) at the version pip resolved."; \
	  echo "# Made by 'make lock' on Python $$(.venv-lock/bin/python -c 'import platform; print(platform.python_version())'); installed with pip -c (constraints)."; \
	  .venv-lock/bin/python -m pip freeze --exclude-editable --all; } > $(LOCK)
	rm -rf .venv-lock

## clean-venv: delete the project environment (the next make builds it again)
clean-venv:
	rm -rf $(VENV)
