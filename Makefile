# flashplan: `make run` starts the web app, `make test` runs the whole suite.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PORT ?= 8501
ADDRESS ?= 127.0.0.1

.PHONY: run test bench lint typecheck clean setup browser fio native docs

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

# the engine and the analytic fast path compiled with mypyc (sim/native/guard.py): rebuilt when a compiled
# module's source changed (the build compares digests), interpreted if the build fails
native: $(STAMP)
	$(BIN)/python -m sim.native.build || echo "flashplan: continuing with the interpreted engine and fast path"

setup: $(STAMP) native

run: $(STAMP) native
	@echo "flashplan web app: http://$(ADDRESS):$(PORT) (127.0.0.1 by default: this machine only; ADDRESS=0.0.0.0 opens it to the network)"
	@if [ "$(ADDRESS)" != "127.0.0.1" ]; then echo "WARNING: serving on $(ADDRESS), reachable from the network, with no authentication"; fi
	$(BIN)/streamlit run app/main.py --server.headless true --server.address $(ADDRESS) --server.port $(PORT) --browser.gatherUsageStats false --client.toolbarMode viewer

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/lint-imports

typecheck: $(STAMP)
	$(BIN)/mypy

# the web app's browser tests drive Debian's chromium (/usr/bin/chromium; chromium or chromium-browser on the PATH
# otherwise, as tests/browser/server.py looks for it) with Playwright; installed once from apt, only when none is found
browser:
	@test -x /usr/bin/chromium || command -v chromium >/dev/null || command -v chromium-browser >/dev/null || { \
	  if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
	  $$SUDO apt-get update && $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y chromium; }

# the fio round trip (tests/calibration/test_fio_loop.py) runs Debian's fio on the exported jobs; installed once
# from apt, only when none is on the PATH
fio:
	@command -v fio >/dev/null || { \
	  if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
	  $$SUDO apt-get update && $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y fio; }

# two test processes handed the tests 4 at a time as they finish, the tests marked slow first (tests/conftest.py):
# the long ones run beside the short ones on both processes, none alone at the end
test: $(STAMP) native lint typecheck browser fio docs
	$(BIN)/pytest -n 2 --maxschedchunk 4 -q --durations=10

# the documentation site in site/: the generated pages (tools/docs_gen.py), then a strict build: a broken link or anchor
# fails it (not --quiet: mkdocs then drops the warnings that strict mode counts)
docs: $(STAMP)
	$(BIN)/python -m tools.docs_gen
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

# engine, sweep (Dask 2 vs 1 workers), analytic fast path, planner and events-per-I/O benchmarks; each prints its
# figures and keeps them in bench/results/ for the docs' benchmark page
bench: $(STAMP) native
	$(BIN)/python -m bench.record bench.run
	$(BIN)/python -m bench.record bench.sweep
	$(BIN)/python -m bench.record bench.fastpath
	$(BIN)/python -m bench.record bench.planner
	$(BIN)/python -m bench.record bench.events

clean:
	rm -rf $(VENV) site .pytest_cache .mypy_cache .ruff_cache build sim/native/_native.json sim/*.so sim/analytic/*.so sim/des/*.so sim/native/*.so sim/route/*.so
