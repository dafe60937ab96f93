# Two entry points: `make run` (install + the daily job on the embedded data service)
# and `make test` (install + the whole test suite). Both create the venv when missing.
# While working: `make test-fast` (the pure, quick part of the suite) and `make snapshot`
# (record an intended change of the definitions in livesearch_pipeline_tests/defs/definitions_snapshot.json).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.install-stamp

# Tests and the default run never need the network or an API key.
export LITELLM_OFFLINE_MODE := true
export LITELLM_LOCAL_MODEL_COST_MAP := True
export LIVESEARCH_DATA_DIR ?= $(CURDIR)/data
export DAGSTER_HOME ?= $(LIVESEARCH_DATA_DIR)/dagster_home

# `make test` runs the suite in TEST_WORKERS processes (pytest-xdist), each test file in one of them.
TEST_WORKERS ?= 2

.PHONY: install run test test-fast snapshot ui clean-venv

$(STAMP): pyproject.toml requirements.lock
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -r requirements.lock
	$(BIN)/python -m pip install -q --no-deps --no-build-isolation -e .
	@touch $(STAMP)

install: $(STAMP)

run: $(STAMP)
	$(BIN)/livesearch run

test: $(STAMP)
	$(BIN)/ruff check livesearch_pipeline livesearch_pipeline_tests benchmarks
	$(BIN)/lint-imports
	$(BIN)/python -m pytest -q -p no:cacheprovider -n $(TEST_WORKERS) --dist loadfile

# Core and unit tests (pure functions, no Dagster run, no server): under a minute.
FAST_TESTS := livesearch_pipeline_tests/core livesearch_pipeline_tests/infra livesearch_pipeline_tests/test_cliargs.py

test-fast: $(STAMP)
	$(BIN)/python -m pytest -q -p no:cacheprovider -m "not slow" $(FAST_TESTS)

snapshot: $(STAMP)
	LIVESEARCH_UPDATE_SNAPSHOT=1 $(BIN)/python -m pytest -q -p no:cacheprovider livesearch_pipeline_tests/defs/test_definitions_snapshot.py

ui: $(STAMP)
	$(BIN)/livesearch ui

clean-venv:
	rm -rf $(VENV)
