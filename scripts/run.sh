#!/usr/bin/env bash
# `make run`: set up what is missing, start private PostgreSQL and Redis under
# .data/run unless DATABASE_URL / REDIS_URL point elsewhere, migrate, create
# the first owner once, then run the web server and one worker until Ctrl-C
# (scripts/supervise.sh restarts either if it dies).
# On exit it stops what it started and nothing else.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"; cd "$ROOT"
scripts/setup.sh

configured() { [ -n "${!1:-}" ] || grep -qE "^$1=" .env 2>/dev/null; }
started=""
pids=()
cleanup() {
  trap - INT TERM EXIT
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  scripts/services.sh stop-these run "$started"
  echo "newsdesk: stopped"
}
trap cleanup INT TERM EXIT

if ! configured DATABASE_URL || ! configured REDIS_URL; then
  started="$(scripts/services.sh start run)"
  while IFS='=' read -r name value; do
    configured "$name" || export "$name=$value"
  done < <(scripts/services.sh env run)
fi
if ! configured SECRET_KEY; then
  mkdir -p .data/run
  if [ ! -s .data/run/secret_key ]; then
    (umask 077; .venv/bin/python -c "import secrets; print(secrets.token_urlsafe(48))" > .data/run/secret_key)
  fi
  SECRET_KEY="$(cat .data/run/secret_key)"; export SECRET_KEY
fi
.venv/bin/python -m app create-database
.venv/bin/python -m app migrate
.venv/bin/python -m app bootstrap
# The supervisor restarts a child that dies (with a back-off) until Ctrl-C.
scripts/supervise.sh "web=.venv/bin/python -m app serve" "worker=.venv/bin/python -m app worker" &
pids+=($!)
wait "${pids[@]}" || true
