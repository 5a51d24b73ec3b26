#!/usr/bin/env bash
# `make demo`: Newsdesk with a demo workspace whose columns poll made-up platforms
# on this machine (app/demo) - no account, no internet. Like `make run`, it starts
# private PostgreSQL and Redis under .data/run, but always uses its own database
# (newsdesk_demo, emptied on every start), Redis database and key prefix, so it
# never touches the newsroom `make run` keeps. Ctrl-C stops everything it started.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"; cd "$ROOT"
scripts/setup.sh

started=""
cleanup() {
  trap - INT TERM EXIT
  scripts/services.sh stop-these run "$started"
  echo "newsdesk: demo stopped"
}
trap cleanup INT TERM EXIT

started="$(scripts/services.sh start run)"
while IFS='=' read -r name value; do export "$name=$value"; done < <(scripts/services.sh env run)
export DATABASE_URL="${DATABASE_URL%/*}/newsdesk_demo"
export DATABASE_OWNER_URL="${DATABASE_OWNER_URL%/*}/newsdesk_demo"
export REDIS_URL="${REDIS_URL%/*}/1" REDIS_PREFIX=nddemo
mkdir -p .data/run
if [ ! -s .data/run/demo_secret_key ]; then
  (umask 077; .venv/bin/python -c "import secrets; print(secrets.token_urlsafe(48))" > .data/run/demo_secret_key)
fi
SECRET_KEY="$(cat .data/run/demo_secret_key)"; export SECRET_KEY
# Web and worker run under scripts/supervise.sh; the demo servers in this process.
.venv/bin/python -m app demo "$@" || true
