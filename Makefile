# Two commands matter: `make run` (serve the app on http://localhost:8501) and `make test`.
# Both create .venv when it is missing and install what the requirements files ask for.

# The first of these on PATH that is a Python >= 3.11 (pyproject.toml's requires-python): Ubuntu 24.04
# ships 3.12, Debian 13 and Homebrew 3.13. Another one: `make run PYTHON=/path/to/python3.x`.
PYTHON_CANDIDATES := python3.11 python3.12 python3.13 python3
PYTHON_OK := import sys; sys.exit(sys.version_info < (3, 11))
PYTHON ?= $(shell for p in $(PYTHON_CANDIDATES); do \
	$$p -c '$(PYTHON_OK)' >/dev/null 2>&1 && { command -v $$p; break; }; done)
VENV := .venv
PY := $(VENV)/bin/python
PORT ?= 8501

# torch, CPU build. On Linux (x86_64, aarch64) PyPI's torch is the CUDA build, several GB with its
# nvidia-* wheels, so the pinned torch is installed first from PyTorch's CPU index (~190 MB) when
# that index answers; where it does not (offline mirrors, a firewall) pip takes torch from its
# default index with the rest (a one-line note, no error). PyPI's macOS and Windows torch is CPU-only.
TORCH_INDEX ?= https://download.pytorch.org/whl/cpu
TORCH_PIN = $(shell grep -E '^torch==' requirements.txt)
HOST_OS ?= $(shell uname -s)
HOST_ARCH ?= $(shell uname -m)
REACHABLE := import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=5)
ifneq ($(filter Linux/x86_64 Linux/aarch64,$(HOST_OS)/$(HOST_ARCH)),)
define install_cpu_torch
@if [ -z "$(TORCH_PIN)" ]; then :; \
elif $(PY) -c '$(REACHABLE)' "$(TORCH_INDEX)/torch/" >/dev/null 2>&1; then \
	echo "Installing $(TORCH_PIN), CPU build, from $(TORCH_INDEX)"; \
	$(PY) -m pip install --quiet --index-url "$(TORCH_INDEX)" "$(TORCH_PIN)" \
	|| echo "Could not install torch from $(TORCH_INDEX): it comes from pip's default index"; \
else echo "$(TORCH_INDEX) not reachable: torch comes from pip's default index"; fi
endef
endif

.PHONY: run serve test lint format test-core test-app test-e2e bench screenshots docker-lint clean

$(VENV)/bin/activate:
	@if [ -z "$(PYTHON)" ]; then \
	echo "No Python >= 3.11 on PATH (tried $(PYTHON_CANDIDATES)). Install one, or name it:" \
	"make $(or $(MAKECMDGOALS),run) PYTHON=/path/to/python3.x" >&2; exit 1; fi
	@$(PYTHON) -c '$(PYTHON_OK)' 2>/dev/null || { \
	echo "$(PYTHON) is not a Python >= 3.11 (pyproject.toml's requires-python)." >&2; exit 1; }
	$(PYTHON) -m venv $(VENV)

# Reinstall only when a requirements file changes.
$(VENV)/.runtime-installed: requirements.txt | $(VENV)/bin/activate
	$(install_cpu_torch)
	$(PY) -m pip install --quiet -r requirements.txt
	touch $@

$(VENV)/.dev-installed: requirements.txt requirements-dev.txt | $(VENV)/bin/activate
	$(install_cpu_torch)
	$(PY) -m pip install --quiet -r requirements-dev.txt
	touch $(VENV)/.runtime-installed $@

run: $(VENV)/.runtime-installed
	@echo "Serving the app on http://localhost:$(PORT) (Ctrl+C to stop)"
	$(PY) -m streamlit run app.py --server.port $(PORT) --server.address localhost

# The app on every core: REPLICAS app processes (default: the core count) behind HAProxy, with
# cookie affinity and health checks, on http://<this host>:8080 (PORT=... to change), and a redis-server
# for the class answers they share. Needs `apt-get install haproxy redis-server`. Ctrl+C stops every
# process it started. See deploy/serve.py.
serve: $(VENV)/.runtime-installed
	$(PY) deploy/serve.py --port $(if $(filter file,$(origin PORT)),8080,$(PORT))$(if $(REPLICAS), --replicas $(REPLICAS))

lint: $(VENV)/.dev-installed
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .

format: $(VENV)/.dev-installed
	$(PY) -m ruff format .
	$(PY) -m ruff check --fix .

test: lint
	$(PY) -m pytest

test-core: $(VENV)/.dev-installed
	$(PY) -m pytest tests/core tests/figures tests/server

test-app: $(VENV)/.dev-installed
	$(PY) -m pytest tests/app tests/ui

test-e2e: $(VENV)/.dev-installed
	$(PY) -m pytest tests/e2e

bench: $(VENV)/.dev-installed
	$(PY) -m benchmarks

# Only the classroom load run (30 students, 60 s, own server); part of `make bench` too.
.PHONY: bench-load
bench-load: $(VENV)/.dev-installed
	$(PY) -m benchmarks load

# Classroom load through `make serve` (issue 9): 1 and 2 replicas behind HAProxy in the same run,
# plus how many students one replica holds; part of `make bench` too.
.PHONY: bench-serve
bench-serve: $(VENV)/.dev-installed
	$(PY) -m benchmarks serve

# The class answers together (issue 26): 30 students answer through `make serve` (2 replicas and
# Redis) next to one replica with the in-process store; part of `make bench` too.
.PHONY: bench-class
bench-class: $(VENV)/.dev-installed
	$(PY) -m benchmarks class

# Server time of every page's reruns (AppTest) and slider steps / page loads in Chromium, each next
# to a one-chart reference page (issue 8); both are part of `make bench` too.
.PHONY: bench-pages bench-browser
bench-pages: $(VENV)/.dev-installed
	$(PY) -m benchmarks pages

bench-browser: $(VENV)/.dev-installed
	$(PY) -m benchmarks browser

# Drag and see (issue 25): every live slider dragged in Chromium (frames during a 60-move drag, move
# -> frame, runs while held, release -> settled) next to the release-only slider (?live=0) in the
# same run; part of `make bench` too.
.PHONY: bench-drag
bench-drag: $(VENV)/.dev-installed
	$(PY) -m benchmarks drag

screenshots: $(VENV)/.dev-installed
	$(PY) -m tests.e2e.screenshots --out screenshots

docker-lint: $(VENV)/.dev-installed
	$(VENV)/bin/hadolint Dockerfile

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache screenshots
