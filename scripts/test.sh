#!/usr/bin/env bash
# `make test`: set up what is missing (Chromium too), start the throw-away
# test PostgreSQL and Redis under .data/test, then lint, type-check and run
# the whole suite: unit and integration tests in parallel, then the browser
# suite in Chromium. Stops the services it started. Non-zero on any failure.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"; cd "$ROOT"
scripts/setup.sh --browser

started="$(scripts/services.sh start test)"
trap 'scripts/services.sh stop-these test "$started"' EXIT
export TEST_DATABASE_URL="postgresql://postgres@127.0.0.1:${ND_PG_PORT:-54339}/newsdesk_test"
export TEST_REDIS_URL="redis://127.0.0.1:${ND_REDIS_PORT:-63809}"

echo "== lint"
.venv/bin/ruff check .
.venv/bin/ruff format --check . >/dev/null || { .venv/bin/ruff format --diff . | head -50; exit 1; }
echo "== types"
.venv/bin/mypy
echo "== tests"
.venv/bin/python -m pytest -n "${ND_TEST_WORKERS:-2}" -p no:cacheprovider tests "$@"
echo "== browser tests"
.venv/bin/python -m pytest -n "${ND_TEST_WORKERS:-2}" -p no:cacheprovider e2e "$@"
