# Two entry points: `make run` (install + the daily job on the embedded data service)
# and `make test` (install + the whole test suite). Both create the venv when missing.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.install-stamp

# Tests and the default run never need the network or an API key.
export LITELLM_OFFLINE_MODE := true
export LITELLM_LOCAL_MODEL_COST_MAP := True
export LIVESEARCH_DATA_DIR ?= $(CURDIR)/data
export DAGSTER_HOME ?= $(LIVESEARCH_DATA_DIR)/dagster_home

.PHONY: install run test ui clean-venv

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
	$(BIN)/python -m pytest -q -p no:cacheprovider

ui: $(STAMP)
	$(BIN)/livesearch ui

clean-venv:
	rm -rf $(VENV)
