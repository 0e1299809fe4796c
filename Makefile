# Two commands matter: `make run` (serve the app on http://localhost:8501) and `make test`.
# Both create .venv when it is missing and install what the requirements files ask for.

PYTHON ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
PORT ?= 8501

.PHONY: run serve test lint format test-core test-app test-e2e bench screenshots docker-lint clean

$(VENV)/bin/activate:
	$(PYTHON) -m venv $(VENV)

# Reinstall only when a requirements file changes.
$(VENV)/.runtime-installed: requirements.txt | $(VENV)/bin/activate
	$(PY) -m pip install --quiet -r requirements.txt
	touch $@

$(VENV)/.dev-installed: requirements.txt requirements-dev.txt | $(VENV)/bin/activate
	$(PY) -m pip install --quiet -r requirements-dev.txt
	touch $(VENV)/.runtime-installed $@

run: $(VENV)/.runtime-installed
	@echo "Serving the app on http://localhost:$(PORT) (Ctrl+C to stop)"
	$(PY) -m streamlit run app.py --server.port $(PORT) --server.address localhost

# The app on every core: REPLICAS app processes (default: the core count) behind HAProxy, with
# cookie affinity and health checks, on http://<this host>:8080 (PORT=... to change). Needs
# `apt-get install haproxy`. Ctrl+C stops every process it started. See deploy/serve.py.
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
	$(PY) -m pytest tests/app

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

# Server time of every page's reruns (AppTest) and slider steps / page loads in Chromium, each next
# to a one-chart reference page (issue 8); both are part of `make bench` too.
.PHONY: bench-pages bench-browser
bench-pages: $(VENV)/.dev-installed
	$(PY) -m benchmarks pages

bench-browser: $(VENV)/.dev-installed
	$(PY) -m benchmarks browser

screenshots: $(VENV)/.dev-installed
	$(PY) -m tests.e2e.screenshots --out screenshots

docker-lint: $(VENV)/.dev-installed
	$(VENV)/bin/hadolint Dockerfile

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache screenshots
