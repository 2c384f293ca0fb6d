# Every target installs what it needs first (idempotent: a stamp file records the install).
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.ragdiag-installed
export HF_HUB_DISABLE_TELEMETRY := 1

# torch, installed first (tools/install_torch.sh says which build and why):
#   TORCH=auto  the CPU build on Linux without an NVIDIA GPU, PyPI's default build elsewhere (default)
#   TORCH=cpu   always the CPU build;  TORCH=gpu  PyPI's default build (Linux x86_64: CUDA + nvidia-* wheels)
#   TORCH_INDEX where the CPU build comes from; when it does not answer, a VERSION+cpu wheel that the
#               configured pip indexes already list is used, else the plain pin (with a warning).
TORCH         ?= auto
TORCH_VERSION ?= 2.13.0
TORCH_INDEX   ?= https://download.pytorch.org/whl/cpu
# BROWSER=0 skips installing Chromium for the report's browser test (that test then skips).
BROWSER       ?= 1

.PHONY: install run test test-fast bench lint docs clean

PIP_VERSION   ?= 26.3
LOCK          := requirements.lock

# The locked environment: every dependency of .[all,dev] at the version and hash in requirements.lock
# (--no-deps: the lock is complete), then torch (its build chosen by tools/install_torch.sh), then this
# package itself; `pip check` proves the whole is consistent. `make lock` rewrites the lock.
# The lock's ~22,000 Python files are compiled to bytecode by compileall on every core (-j 0) instead of
# by pip one file after another (--no-compile; the lock without torch, idle: 132 s → 98 s); like pip, a
# file that does not compile is not an error.
$(STAMP): pyproject.toml $(LOCK)
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q "pip==$(PIP_VERSION)"
	$(PY) -m pip install -q --no-compile --no-deps --require-hashes -r $(LOCK)
	$(PY) -m compileall -q -j 0 $$($(PY) -c 'import sysconfig; print(*sorted({sysconfig.get_path("purelib"), sysconfig.get_path("platlib")}))') >/dev/null || \
	  echo "install: some installed files did not compile to bytecode (pip ignores those too)"
	tools/install_torch.sh $(PY) $(TORCH) $(TORCH_VERSION) $(TORCH_INDEX)
	$(PY) -m pip install -q --no-deps --no-build-isolation -e .
	$(PY) -m pip check
	touch $(STAMP)

install: $(STAMP)

# Re-resolve the lock from pyproject.toml (uv, universal, Python >= 3.11; torch pinned at TORCH_VERSION
# and left to install_torch.sh). tests/test_lock.py fails when pyproject and the lock disagree.
.PHONY: lock
lock: install
	$(PY) -m tools.lock --torch-version $(TORCH_VERSION)

# The newest versions pyproject.toml allows, in a separate environment (.venv-latest), then the suite:
# an upgrade is tried on purpose, never by accident (not run in CI).
.PHONY: test-latest
test-latest:
	test -x .venv-latest/bin/python || $(PYTHON) -m venv .venv-latest
	.venv-latest/bin/python -m pip install -q --upgrade pip
	tools/install_torch.sh .venv-latest/bin/python $(TORCH) $(TORCH_VERSION) $(TORCH_INDEX)
	.venv-latest/bin/python -m pip install -q --upgrade --upgrade-strategy eager -e '.[all,dev]'
	.venv-latest/bin/python -m pytest -q -n 2 --dist loadfile --no-loadscope-reorder

run: install
	$(VENV)/bin/ragdiag correlate --dataset msmarco

# The suite writes Python's bytecode cache (__pycache__, git-ignored) even where PYTHONDONTWRITEBYTECODE is
# set, as on this project's CI machines: without it every test process and every `ragdiag` subprocess the
# tests start compiles ragdiag, the test modules and pytest's assertion rewrites from source again
# (measured on a fresh clone, idle, 2 cores: 6 min 30 s with it set, 5 min 32 s without).
test: install browser
	env -u PYTHONDONTWRITEBYTECODE $(PY) -m pytest -q -n 2 --dist loadfile --no-loadscope-reorder

# The suite without the Chromium install (same as `make test BROWSER=0`).
test-fast:
	$(MAKE) test BROWSER=0

# Chromium for the report's browser test (tests/report/test_report_browser.py), announced before
# apt-get runs. In a clone: skipped with a note where apt is unavailable or we are not root (the test
# then skips with its reason), and with BROWSER=0. With CI=true (.ci/run) an install that fails stops
# the build with apt's own output (the browser test must run there).
.PHONY: browser
browser:
	@if command -v chromium >/dev/null 2>&1; then :; \
	elif [ "$${CI:-}" = true ]; then \
	  echo "browser: installing Chromium with apt-get (CI=true: the browser test needs it)"; \
	  { apt-get update -qq && apt-get install -y -qq chromium; } || \
	  { echo "make browser: installing chromium failed (CI=true: the browser test needs it)" >&2; exit 1; }; \
	elif [ "$(BROWSER)" = 0 ]; then echo "browser: BROWSER=0: not installing Chromium (the browser test will skip)"; \
	elif command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
	  echo "browser: installing Chromium with apt-get (Debian 12: an 81 MB download, 290 MB installed, plus its libraries) for tests/report/test_report_browser.py; skip with make test BROWSER=0 or make test-fast"; \
	  (apt-get update -qq && apt-get install -y -qq chromium) >/dev/null 2>&1 || echo "make browser: chromium not installed (the browser test will skip, saying why): apt-get install chromium failed" >&2; \
	else echo "make browser: chromium not installed (the browser test will skip, saying why): no root apt-get here" >&2; fi

# ruff over the package, the tests and the benchmarks (rules in pyproject.toml [tool.ruff]), then mypy
# on the package (pyproject.toml [tool.mypy]: the default level, strict on commands, results, measures
# and answers); each says which of the two failed.
lint: install
	$(VENV)/bin/ruff check ragdiag tests benchmarks tools || { echo "make lint: ruff found problems" >&2; exit 1; }
	$(PY) -m mypy ragdiag || { echo "make lint: mypy found type errors" >&2; exit 1; }

# The documentation site (mkdocs.yml, docs/) into site/; --strict: a broken link or a page left out fails.
docs: install
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --quiet

bench: install
	$(PY) benchmarks/run_all.py

# Rebuild the bundled retrieval-response sample (real L6 ranking, simulated grades; ~1 min).
.PHONY: fixtures
fixtures: $(STAMP)
	$(PY) -m tools.sample_builder --out fixtures/retrieval-response-sample --seed 0

# The docs' LLM test server (not an LLM: deterministic test replies) on 127.0.0.1:$(PORT); Ctrl-C stops it.
PORT ?= 8000
.PHONY: test-server
test-server: install
	$(PY) -m tests.servers.chat_server --port $(PORT)

clean:
	rm -rf $(VENV) .venv-latest .pytest_cache site
