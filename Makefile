# kafkafmt: one entry point for setting up and running everything.
#   make run          set up, write the samples, generate the default logs and run the pipeline (make pipeline),
#                     build the documentation site (make docs) and start JupyterLab (prints its URL)
#   make run-headless the same for servers: everything but JupyterLab
#   make docs         the documentation site in build/docs/ (open build/docs/index.html; offline): the notebooks
#                     executed once as tutorials (panels as static figures and tables), how-to, reference generated
#                     from the code, explanation, benchmarks (Sphinx + MyST-NB + pydata-sphinx-theme; docs extra)
#   make report       another name for make docs (the notebooks' offline rendering is the site's tutorials)
#   make present      the notebooks as a dashboard app (Voila, code hidden) on http://127.0.0.1:$(PRESENT_PORT)/
#                     (PRESENT_PORT, default 8866); Ctrl-C stops it
#   make notebooks    re-execute the notebooks in place (stored outputs and the widgets' state, so that JupyterLab
#                     shows the panels before the kernel runs) and normalise them with nbstripout
#   make warmup       compile the numba kernels into their on-disk cache (make setup runs it)
#   make test         set up, ruff check, then the whole test suite and nbval on notebooks/ (what .ci/run calls;
#                     a ruff error fails it after the tests ran)
#   make lint         ruff check alone (its rules: pyproject.toml; ruff check --fix fixes most findings)
#   make oracle       fetch Apache Kafka's jars with Maven and compile the Java oracle
#   make conformance  run every differential case against a live Kafka 3.9.2 broker and print the report
#   make check-java   say whether Java 17 and Maven are present (needed by the Kafka oracle)
#   make bench        ratios against kafka-python and aiokafka (C and pure Python), build/bench/results.json (< 10 min)
#   make bench-quick  the same on 20k records and a 128 MiB segment (< 2 min)
#   make bench-dump   `kafkafmt dump --deep` vs Kafka 3.9.2's kafka-dump-log on a 300k-record segment, new processes
#                     (benchmarks/dump_deep.py; needs `make oracle`'s jars; build/bench/dump_deep.json)
#   make bench-cli    wall and peak RSS of short calls (--help, a small dump, explain fetch, audit, clean) against
#                     `python -c pass` and kafka-dump-log, new processes (benchmarks/cli.py; build/bench/cli.json; < 2 min)
#   make bench-cleaner  the log cleaner vs Kafka 3.9.2's warm Cleaner (oracle JVM) and vs a JVM process end to
#                     end, build/bench/cleaner.json (< 6 min; `make bench` runs its --quick form, < 2 min)
#   make pipeline     generate data/logs/default (if absent) and run the Spark pipeline jobs into data/derived/default
#   make fuzz         long coverage-guided fuzzing of every target (FUZZ_SECONDS each; FUZZ_TARGETS=...)
#   make history-record  run kafkafmt's live checks on real Kafka 0.9.0.1 ... 2.8.2 brokers and clients, seed 000's
#                     rolling upgrade, the time index's upgrade from 0.10.0.1 to 0.10.1.1 and every shipped scenario
#                     live, and write kafkafmt/scenarios/record/last-live-run.json
#                     (about 10 min; the notebooks show it: then make notebooks)
#   make bench-conversion  what a format conversion costs real brokers (0.9.0.1 ... 4.4.0): broker CPU per GB, MB/s,
#                     fetch latency, heap of one large fetch eager vs lazy, KIP-31's produce saving, the cost model's
#                     held-out check; build/bench/conversion.json (< 15 min; BENCH_ARGS=--quick for development)
#   make bench-spark  Spark local[2] read throughput vs one Python process and vs Parquet (benchmarks/spark_read.py)
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
# the pyproject extras each kind of target needs: reading the workbench (run, present, pipeline), the test suite,
# the documentation site; one stamp per set, dropped when pyproject.toml changes
EXTRAS ?= readers,spark
TEST_EXTRAS ?= readers,spark,tests,docs
DOCS_EXTRAS ?= readers,spark,docs
PYPROJECT_SUM := $(shell cat pyproject.toml conformance/pyproject.toml | cksum | cut -d' ' -f1)
installed = $(VENV)/.installed-$(PYPROJECT_SUM)-$(1)
STAMP := $(call installed,$(EXTRAS))
TEST_STAMP := $(call installed,$(TEST_EXTRAS))
DOCS_STAMP := $(call installed,$(DOCS_EXTRAS))
PYTEST_ARGS ?=
NBVAL_EXTRA ?=

FUZZ_SECONDS ?= 300
FUZZ_TARGETS ?= $(shell $(PY) -c 'import sys; sys.path.insert(0, "tests/fuzz"); import targets; print(" ".join(sorted(targets.TARGETS)))' 2>/dev/null)
NOTEBOOKS := $(sort $(wildcard notebooks/*.ipynb))
NBSTRIPOUT_ARGS := --keep-output --keep-count --keep-metadata-keys metadata.widgets
NBVAL_ARGS := --nbval --nbval-current-env --nbval-sanitize-with notebooks/sanitize.cfg --nbval-cell-timeout 180 -p no:cacheprovider
JUPYTER_PORT ?= 8888
PRESENT_PORT ?= 8866

.PHONY: oracles-if-java setup warmup run run-headless docs report present notebooks test lint oracle conformance check-java ensure-chromium clean help history-record bench bench-quick bench-dump bench-cli bench-cleaner bench-conversion pipeline fuzz bench-spark

help:
	@sed -n '2,/^SHELL/p' Makefile | grep '^#'

$(VENV)/.installed-$(PYPROJECT_SUM)-%: pyproject.toml conformance/pyproject.toml
	@$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 10), "kafkafmt needs Python >= 3.10"'
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
# uv installs (the same versions as pip's resolver, measured here in half pip's time); pip stays for the tests
	$(PY) -m pip install --quiet --upgrade pip uv
	$(PY) -m uv pip install --quiet --compile-bytecode --python $(PY) -e '.[$*]'
# the test rig (conformance/pyproject.toml) for the tests: scenario run --live finds it by entry point
	case ',$*,' in *,tests,*) $(PY) -m uv pip install --quiet --compile-bytecode --python $(PY) --no-deps -e conformance/ ;; esac
	find $(VENV) -maxdepth 1 -name '.installed-*' ! -name '.installed-$(PYPROJECT_SUM)-*' -delete
	touch $@

setup: $(STAMP) warmup check-java ensure-chromium

# compile the numba kernels into their on-disk cache (kafkafmt/records/fast/__pycache__ or $$NUMBA_CACHE_DIR), so that
# the first records_table in a notebook loads them (~0.5 s) instead of compiling (3-5 s); ~1.5 s when already cached
warmup: $(STAMP)
	$(PY) -m kafkafmt warmup

ensure-chromium:
	@bash scripts/ensure-chromium.sh

check-java:
	@bash scripts/check-java.sh

# Kafka 3.9.2's and 4.4.0's oracles when Java 17 and Maven are here (make test); without them the tests say why
oracles-if-java:
	@if bash scripts/check-java.sh --quiet; then $(MAKE) --no-print-directory -C conformance oracle oracle-4.4; fi

oracle: setup
	@bash scripts/check-java.sh --require
	$(MAKE) -C conformance oracle oracle-4.4

conformance: oracle
	$(MAKE) -C conformance conformance PYTHON=$(abspath $(PY))

run: run-headless
	@bash scripts/run-jupyter.sh $(VENV) $(JUPYTER_PORT)

run-headless: setup
	$(PY) -m kafkafmt samples --out data/samples
	$(PY) -m kafkafmt dump data/samples/v2-headers.bin data/samples/v1-gzip-wrapper.bin --deep
	@if bash scripts/check-java.sh --quiet; then $(MAKE) --no-print-directory pipeline; \
	else echo "run: no Java 17, so no Spark pipeline (data/derived): notebooks 04 and 05 will fail in their last sections (NoSuchFileError: no Java)"; fi
	$(MAKE) --no-print-directory docs

# .PHONY: a docs/ folder exists, so a file target named docs would always be "up to date"
docs: $(DOCS_STAMP) setup
	$(PY) docs/_ext/build_site.py build

report: docs

history-record: setup
	$(PY) conformance/history/record.py

present: setup
	@$(PY) -m kafkafmt.viz.present --port $(PRESENT_PORT)

# nbclient stores every widget model's state in metadata.widgets (store_widget_state, said explicitly), under random
# ids that kafkafmt.viz.saved_state makes stable; nbstripout strips metadata.widgets unless told to keep it
# (NBSTRIPOUT_ARGS, also what tests/viz/test_notebooks_hygiene.py verifies)
notebooks: $(TEST_STAMP) setup
	$(VENV)/bin/jupyter nbconvert --to notebook --execute --inplace --ExecutePreprocessor.store_widget_state=True $(NOTEBOOKS)
	$(PY) -m kafkafmt.viz.saved_state $(NOTEBOOKS)
	$(VENV)/bin/nbstripout $(NBSTRIPOUT_ARGS) $(NOTEBOOKS)

lint: $(TEST_STAMP)
	$(PY) -m ruff check .

# ruff first; a lint error fails the run, but only after the tests have run too (their results are not lost)
# setup (its numba warmup: one busy core) beside the oracles' Maven and javac
test: $(TEST_STAMP)
	@$(MAKE) --no-print-directory -j2 setup oracles-if-java
	@lint=0; $(PY) -m ruff check . || lint=1; \
	$(PY) -m pytest $(PYTEST_ARGS) && $(PY) -m pytest $(NBVAL_ARGS) $(NBVAL_EXTRA) notebooks/ || exit 1; \
	if [ $$lint = 1 ]; then echo "test: ruff check found errors (above); ruff check --fix fixes most"; exit 1; fi

bench: $(TEST_STAMP) setup
	$(PY) benchmarks/bench.py
	@if bash scripts/check-java.sh --quiet; then $(MAKE) --no-print-directory -C conformance oracle; fi
	$(PY) benchmarks/cleaner.py --quick

bench-cleaner: $(TEST_STAMP) setup
	@if bash scripts/check-java.sh --quiet; then $(MAKE) --no-print-directory -C conformance oracle; fi
	$(PY) benchmarks/cleaner.py

bench-quick: $(TEST_STAMP) setup
	$(PY) benchmarks/bench.py --quick

# real brokers: 0.9.0.1 ... 2.8.2 from Maven (kafkarig.releases), 3.9.2 and 4.4.0 from the oracles' jars
bench-conversion: $(TEST_STAMP) setup
	@bash scripts/check-java.sh --quiet || { echo "bench-conversion: needs Java 17 and Maven (make check-java)"; exit 1; }
	@$(MAKE) --no-print-directory -C conformance jars oracle-4.4
	$(PY) benchmarks/conversion.py $(BENCH_ARGS)

bench-dump: $(TEST_STAMP) setup oracle
	$(PY) benchmarks/dump_deep.py

bench-cli: $(TEST_STAMP) setup oracle
	$(PY) benchmarks/cli.py

pipeline: setup
	test -d data/logs/default || $(PY) -m kafkafmt gen --workload default --out data/logs/default
	$(PY) -m kafkafmt pipeline --logs data/logs/default --out data/derived/default

# corpora persist in .fuzz/corpus/TARGET between runs; crashes land in .fuzz/crashes/ (then: a fix and a
# copy under tests/fuzz/regressions/TARGET/); per-target figures are appended to .fuzz/campaign.tsv
fuzz: setup
	@mkdir -p .fuzz/crashes
	@for t in $(FUZZ_TARGETS); do \
	  echo "fuzz: $$t for $(FUZZ_SECONDS)s"; \
	  $(PY) tests/fuzz/atheris_main.py $$t .fuzz/corpus/$$t -max_total_time=$(FUZZ_SECONDS) -timeout=30 \
	    -rss_limit_mb=2000 -artifact_prefix=.fuzz/crashes/$$t- -print_final_stats=1 2> .fuzz/$$t.log; \
	  rc=$$?; runs=$$(sed -n 's/^stat::number_of_executed_units: *//p' .fuzz/$$t.log); \
	  printf '%s\t%s\t%s\t%s\n' "$$t" "$(FUZZ_SECONDS)" "$${runs:-?}" "$$rc" | tee -a .fuzz/campaign.tsv; \
	done

bench-spark: setup
	$(PY) benchmarks/spark_read.py

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis conformance/.cache conformance/target .fuzz build
