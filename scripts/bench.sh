#!/usr/bin/env bash
# `make bench`: every benchmark in bench/, against the throw-away test services.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"; cd "$ROOT"
scripts/setup.sh
started="$(scripts/services.sh start test)"
trap 'scripts/services.sh stop-these test "$started"' EXIT
export DATABASE_URL="postgresql://postgres@127.0.0.1:${ND_PG_PORT:-54339}/newsdesk_bench"
export REDIS_URL="redis://127.0.0.1:${ND_REDIS_PORT:-63809}/15"
for bench in bench/*.py; do
  echo "== $bench"
  .venv/bin/python "$bench"
done
