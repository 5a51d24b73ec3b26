# The workflow. `make run` and `make test` set up everything they need.
.PHONY: run demo test lint format types bench screenshots messages catalogs clean help

help:
	@echo "make run     - run Newsdesk (web + worker) on http://127.0.0.1:8000"
	@echo "make demo    - run Newsdesk with a live demo newsroom, offline (no accounts needed)"
	@echo "make test    - lint, type-check and run the whole test suite"
	@echo "make lint    - ruff check and format check"
	@echo "make format  - ruff format and fix"
	@echo "make types   - mypy"
	@echo "make bench   - run the benchmarks in bench/"
	@echo "make screenshots - retake the README's wall screenshots from the demo newsroom"
	@echo "make messages - extract UI text into app/locale/messages.pot and merge it into each catalogue"
	@echo "make catalogs - compile the catalogues (.po -> .mo; set-up does this too)"
	@echo "make clean   - remove .venv and the test data (keeps .data/run)"

run:
	@scripts/run.sh

demo:
	@scripts/demo.sh

test:
	@scripts/test.sh

lint:
	.venv/bin/ruff check .
	.venv/bin/ruff format --check .

format:
	.venv/bin/ruff check --fix .
	.venv/bin/ruff format .

types:
	.venv/bin/mypy

bench:
	@scripts/bench.sh

screenshots:
	scripts/setup.sh --browser
	@fc-list | grep -q "Noto Color Emoji" || { echo "screenshots: installing fonts for Japanese and emoji"; \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq fonts-noto-cjk fonts-noto-color-emoji >/dev/null; }
	scripts/services.sh start test
	SCREENSHOTS=1 .venv/bin/python -m pytest -p no:cacheprovider -q e2e/test_screenshots.py

messages:
	mkdir -p app/locale
	.venv/bin/pybabel extract -F babel.cfg -k _ -k N_ -k gettext -k ngettext:1,2 -k _count:1,2 \
		--no-location --sort-output --no-wrap -o app/locale/messages.pot .
	.venv/bin/pybabel update -i app/locale/messages.pot -d app/locale -D messages --no-fuzzy-matching --ignore-obsolete --no-wrap

catalogs:
	.venv/bin/python -c "from app.core.i18n import compile_catalogs; compile_catalogs()"

clean:
	-scripts/services.sh stop test
	rm -rf .venv .data/test .data/cache static/vendor
