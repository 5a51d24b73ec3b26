# The workflow. `make run` and `make test` set up everything they need.
.PHONY: run test lint format types bench services services-stop clean help

help:
	@echo "make run     - run Newsdesk (web + worker) on http://127.0.0.1:8000"
	@echo "make test    - lint, type-check and run the whole test suite"
	@echo "make lint    - ruff check and format check"
	@echo "make format  - ruff format and fix"
	@echo "make types   - mypy"
	@echo "make bench   - run the benchmarks in bench/"
	@echo "make clean   - remove .venv and the test data (keeps .data/run)"

run:
	@scripts/run.sh

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

clean:
	-scripts/services.sh stop test
	rm -rf .venv .data/test .data/cache static/vendor
