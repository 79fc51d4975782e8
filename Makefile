# flashplan: `make run` starts the web app, `make test` runs the whole suite.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PORT ?= 8501

.PHONY: run test bench lint typecheck clean setup browser

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

# the analytic fast path compiled with mypyc (sim/native.py); interpreted if the build fails
FASTPATH := sim/_fastpath.json
$(FASTPATH): $(STAMP) $(wildcard sim/analytic/*.py) sim/native.py sim/build_fastpath.py
	$(BIN)/python -m sim.build_fastpath || echo "flashplan: continuing with the interpreted fast path"

setup: $(STAMP) $(FASTPATH)

run: $(STAMP) $(FASTPATH)
	@echo "flashplan web app: http://localhost:$(PORT)"
	$(BIN)/streamlit run app/main.py --server.headless true --server.port $(PORT) --browser.gatherUsageStats false --client.toolbarMode viewer

lint: $(STAMP)
	$(BIN)/ruff check .

typecheck: $(STAMP)
	$(BIN)/mypy

# the web app's browser test drives Debian's chromium (/usr/bin/chromium) with Playwright
browser:
	@test -x /usr/bin/chromium || { \
	  if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
	  $$SUDO apt-get update && $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y chromium; }

test: $(STAMP) $(FASTPATH) lint typecheck browser
	$(BIN)/pytest -n 2 -q

# engine, sweep (Dask 2 vs 1 workers), analytic fast path and planner benchmarks; each prints its figures
bench: $(STAMP) $(FASTPATH)
	$(BIN)/python -m bench.run
	$(BIN)/python -m bench.sweep
	$(BIN)/python -m bench.fastpath
	$(BIN)/python -m bench.planner

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache build $(FASTPATH) sim/_fastpath__mypyc*.so sim/analytic/*.so
