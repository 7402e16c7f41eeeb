# Two commands do everything on a fresh machine with Python 3.11+, pip and make:
#   make run    set up, generate the sample data if missing, answer an example question with
#               the engine, then start the Telegram bot (or say exactly which settings it needs)
#   make test   set up, lint (ruff check and ruff format --check), run the test suite
PYTHON ?= python3
UV_VERSION := 0.13.8
UV := .tools/bin/uv
BARB := .venv/bin/barb
export UV_PYTHON_DOWNLOADS := never
export UV_PYTHON := $(PYTHON)
# Byte-compile at install: with PYTHONDONTWRITEBYTECODE set (as on these machines) every
# process would otherwise recompile pandas & co. at import (cold start 2.9 s -> 1.7 s).
export UV_COMPILE_BYTECODE := 1

EXAMPLE := {"session": "RTH", "from": "daily", "map": {"weekday": "dayname()"}, "group_by": "weekday", "select": "mean(range)"}

.PHONY: setup sample run test test-scale scale-servers lint bench catalogs

$(UV):
	$(PYTHON) -m venv .tools
	.tools/bin/pip install --quiet "uv==$(UV_VERSION)"

setup: $(UV)
	$(UV) sync --frozen --quiet
	.venv/bin/python -m compileall -q barb bot

sample: setup
	$(BARB) data sample

run: sample
	$(BARB) query '$(EXAMPLE)'
	@# Exit status 2 means "not configured yet": barb bot has printed what to set.
	$(BARB) bot || [ $$? -eq 2 ]

lint: setup
	.venv/bin/ruff check .
	.venv/bin/ruff format --check .

# Four workers on two cores: the process tests (bots killed and restarted, workers, servers)
# mostly wait, and the other workers compute meanwhile (6,154 tests from fresh clones on a
# quiet machine, 29 November: 596 s of tests on four, 738 s on three). The sample is written
# first, once: left to the tests, each worker generated the same files at once (about 40 s
# each on a fresh clone).
test: sample
	.venv/bin/ruff check .
	.venv/bin/ruff format --check .
	.venv/bin/pytest -q -m "not scale" -n 4 --dist worksteal

# Several replicas behind the real HAProxy: the servers come from Debian's packages (as root,
# installed only when missing), so this target needs apt; `make test` needs nothing but Python.
SCALE_PACKAGES := haproxy
scale-servers:
	@missing=""; for p in $(SCALE_PACKAGES); do command -v $$p >/dev/null || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; fi

test-scale: setup scale-servers
	.venv/bin/pytest -q -m scale

bench: sample
	.venv/bin/python bench/engine.py --write docs/benchmarks.md
	.venv/bin/python bench/bot_load.py --write docs/benchmarks.md
	.venv/bin/python bench/queue_load.py --write docs/benchmarks.md

# After adding or removing a text in the code: the templates extracted from the code, and
# each language's catalog brought in line (new keys come in untranslated, and the tests fail
# until they are translated in locales/<lang>/LC_MESSAGES/*.po). Read from the .po files at
# run time: nothing to compile. The POT-Creation-Date line pybabel writes is taken out, so
# that a run which changes no text leaves the tree clean (Plural-Forms and the other
# headers stay).
PYBABEL_EXTRACT := .venv/bin/pybabel -q extract --no-default-keywords --no-location --sort-output \
  --project Barb --version 0.1.0
PYBABEL_UPDATE := .venv/bin/pybabel -q update --no-fuzzy-matching --ignore-obsolete -d locales
catalogs: setup
	$(PYBABEL_EXTRACT) -k t -k N_ -o locales/bot.pot bot
	$(PYBABEL_EXTRACT) -k words -k N_ -o locales/barb.pot barb
	$(PYBABEL_UPDATE) -D bot -i locales/bot.pot
	$(PYBABEL_UPDATE) -D barb -i locales/barb.pot
	sed -i '/^"POT-Creation-Date: /d' locales/*.pot locales/*/LC_MESSAGES/*.po
