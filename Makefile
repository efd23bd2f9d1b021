# rnnsearch: `make demo` trains and shows the default model, `make test` runs the tests.
# Both create .venv and install the pinned dependencies first.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
INSTALLED := $(VENV)/.installed
DEMO_DIR := runs/demo
DEMO_MINUTES ?= 12
TEST := data/multi30k/test_2016_flickr
CHROMIUM := /usr/bin/chromium
MSGFMT := /usr/bin/msgfmt
PANDOC := /usr/bin/pandoc
SUDO := $(if $(filter 0,$(shell id -u)),,sudo)
# One pytest-xdist worker per core, each kept to its own core (tests/conftest.py); a test
# file's tests stay in one worker, so its module-scoped models are trained once.
TEST_WORKERS ?= $(shell nproc 2>/dev/null || echo 1)
# The learning tests run twice at once, a worker each: with this CPU's kernels, and with
# what an AVX2-only CPU gives PyTorch, MKL and oneDNN, so a test tuned to one instruction
# set fails here, not on a user's machine.
AVX2_WORKER := popen//env:ATEN_CPU_CAPABILITY=avx2//env:ONEDNN_MAX_CPU_ISA=AVX2//env:MKL_ENABLE_INSTRUCTIONS=AVX2

.PHONY: install browser test test-slow check-formats demo bench bench-alignment docs docs-serve clean

install: $(INSTALLED)

# With the `align` extra (eflomal, which `rnnsearch align-corpus` runs): it compiles with the
# C compiler, in under a minute; where it cannot, the rest installs and its tests are skipped.
$(INSTALLED): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check -e '.[test,tensorboard,docs,align]' || { \
		echo "eflomal did not build (no C compiler?): installing without the align extra" >&2; \
		$(BIN)/pip install --quiet --disable-pip-version-check -e '.[test,tensorboard,docs]'; }
	touch $@

# The browser test drives Debian's Chromium; installed once, when it is missing.
browser: $(CHROMIUM)

$(CHROMIUM):
	$(SUDO) apt-get update -qq
	$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
		chromium fonts-dejavu-core >/dev/null

# The documents' tests have real readers read what they write: gettext's `msgfmt -c`
# each PO catalogue, pandoc each Word document.
$(MSGFMT) $(PANDOC):
	$(SUDO) apt-get update -qq
	$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends gettext pandoc >/dev/null

test: $(INSTALLED) $(CHROMIUM) $(MSGFMT) $(PANDOC)
	$(BIN)/ruff check rnnsearch tests bench docs/hooks
	$(BIN)/ruff format --check rnnsearch tests bench docs/hooks
	$(BIN)/lint-imports --no-cache
	$(BIN)/mypy rnnsearch
	$(MKDOCS) build --strict --quiet
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadfile -m 'not learning and not slow'
	$(BIN)/python -m pytest -q -m 'learning and not slow' --dist each --tx popen --tx '$(AVX2_WORKER)'

# The manual (mkdocs.yml), built into site/ in strict mode: a broken link, a missing page
# or an unresolved API reference fails it. docs-serve serves it at http://127.0.0.1:8000.
MKDOCS := NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs

docs: $(INSTALLED)
	$(MKDOCS) build --strict

docs-serve: $(INSTALLED)
	$(MKDOCS) serve --dev-addr 127.0.0.1:8000

# The documents' outputs opened by LibreOffice (headless, to PDF) and checked by epubcheck:
# Debian's packages, some hundred megabytes, installed here only, outside `make test`.
SOFFICE := /usr/bin/soffice
EPUBCHECK := /usr/share/java/epubcheck.jar

$(SOFFICE) $(EPUBCHECK):
	$(SUDO) apt-get update -qq
	$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
		libreoffice-writer-nogui libreoffice-calc-nogui libreoffice-impress-nogui epubcheck >/dev/null

check-formats: $(INSTALLED) $(SOFFICE) $(EPUBCHECK)
	$(BIN)/python -m pytest -q -m slow tests/integration/test_real_readers.py

test-slow: $(INSTALLED)
	$(BIN)/python -m pytest -q -m slow

demo: $(INSTALLED)
	rm -rf $(DEMO_DIR)
	$(BIN)/rnnsearch train configs/multi30k_de_en.yaml --set train.model_dir=$(DEMO_DIR) --set train.max_minutes=$(DEMO_MINUTES)
	@echo "== test_2016_flickr, beam 5: detokenised cased sacreBLEU and chrF"
	$(BIN)/rnnsearch evaluate $(DEMO_DIR) --src $(TEST).de.gz --ref $(TEST).en.gz
	@echo "== the same, lowercased and tokenised as in the Multi30k literature"
	$(BIN)/rnnsearch evaluate $(DEMO_DIR) --src $(TEST).de.gz --ref data/multi30k/tok/test_2016_flickr.lc.norm.tok.en.gz --lowercase-tokenized
	@echo "== a few translations"
	zcat $(TEST).de.gz | head -5 | $(BIN)/rnnsearch translate $(DEMO_DIR)
	$(BIN)/rnnsearch attention $(DEMO_DIR) "Ein kleines Mädchen klettert in ein Spielhaus aus Holz." -o $(DEMO_DIR)/alignment.png

bench: $(INSTALLED)
	$(BIN)/python bench/speed.py

# Word alignments against human ones, beside eflomal's: the `align` extra is installed
# again, so that a machine where it could not be built stops here with pip's reason.
bench-alignment: $(INSTALLED)
	$(BIN)/pip install --quiet --disable-pip-version-check -e '.[test,tensorboard,align]'
	$(BIN)/python bench/alignment.py

clean:
	rm -rf $(VENV) runs .pytest_cache site
