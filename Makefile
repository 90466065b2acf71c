# The two commands a newcomer types: `make build` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
CONFIG ?= configs/sample.toml
export PYTHONHASHSEED := 0

.PHONY: help venv build test test-fast audit sample-vocab bench bench-minhash grounding-eval langid-eval mutation clean

help:
	@echo "make build   set up .venv if needed, build the release named by CONFIG ($(CONFIG))"
	@echo "make test    set up .venv if needed, run the whole test suite"
	@echo "make audit   audit the release built from CONFIG"

venv: $(STAMP)

# Exact versions come from requirements.lock; the project itself installs without deps.
$(STAMP): requirements.lock pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check -r requirements.lock
	$(BIN)/pip install --quiet --disable-pip-version-check --no-deps -e .
	touch $(STAMP)

build: $(STAMP)
	$(BIN)/mmedbench build --config $(CONFIG)

audit: $(STAMP)
	$(BIN)/mmedbench audit releases/$$($(BIN)/python -c "import tomllib,sys;print(tomllib.load(open('$(CONFIG)','rb'))['version'])")

# The suite runs on TEST_WORKERS processes (pytest-xdist), a test file per worker at a time
# so that a file's module fixtures are built once; the sample build is made once per run and
# shared by the workers (tests/conftest.py). Figures and the slowest tests: docs/testing.md.
TEST_WORKERS ?= 2
test: $(STAMP)
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadfile

test-fast: $(STAMP)
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadfile -m "not slow"

# Re-derive the committed sample vocabulary from ../shared/data (byte-identical output).
sample-vocab: $(STAMP)
	$(BIN)/python -m umls.derive_sample --data ../shared/data --out umls/sample

# Benchmarks: measured numbers for docs/, never timed assertions in tests.
# `make bench BENCH_PRESET=full` (17M MRCONSO rows) generates its inputs once (minutes),
# then runs every stage in-process and the CLI builds; docs/performance-run.md gets a
# section per preset. BENCH_ARGS passes options to run_bench.py (--cli-only, --from ...).
BENCH_PRESET ?= paper
BENCH_ARGS ?=
BENCH_INPUTS := benchmarks/out/scale-$(BENCH_PRESET)
bench: $(STAMP) $(BENCH_INPUTS)/generation.json
	nice -n 5 $(BIN)/python benchmarks/run_bench.py --config $(BENCH_INPUTS)/config.toml $(BENCH_ARGS)

# inputs are regenerated only when the generator (its code or its data tables) or the language
# registry it copies changed
SCALE_GENERATOR := $(wildcard benchmarks/__init__.py benchmarks/scale/*.py benchmarks/scale/data/*.tsv benchmarks/scale/data/*.toml)
benchmarks/out/scale-%/generation.json: $(SCALE_GENERATOR) configs/languages.toml
	$(BIN)/python -m benchmarks.scale --preset $* --out benchmarks/out/scale-$*

bench-minhash: $(STAMP)
	$(BIN)/python benchmarks/bench_minhash.py --md docs/minhash.md

grounding-eval: $(STAMP)
	$(BIN)/python benchmarks/grounding_eval.py

langid-eval: $(STAMP)
	$(BIN)/python benchmarks/langid_eval.py

# Mutation score of the core pure modules (docs/testing.md); MODULE="path ..." for some of them.
mutation: $(STAMP)
	$(BIN)/python benchmarks/mutation.py --jobs 2 $(foreach m,$(MODULE),--module $(m)) --json benchmarks/out/mutation.json --markdown benchmarks/out/mutation.md

clean:
	rm -rf .mmedbench-cache releases .pytest_cache
