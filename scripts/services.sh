#!/usr/bin/env bash
# Private PostgreSQL and Redis for one profile of this checkout.
#   scripts/services.sh start|stop|status|env  run|test
# "run" keeps durable data in .data/run on ports 54329/63799; "test" is a
# throw-away cluster (fsync off) in .data/test on ports 54339/63809.
# `start` prints "<service> started" for each service it started itself;
# `stop-these PROFILE "<that output>"` stops exactly those and nothing else.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
ACTION="${1:-}"; PROFILE="${2:-run}"
case "$PROFILE" in
  run)  PGPORT="${ND_PG_PORT:-54329}"; REDIS_PORT="${ND_REDIS_PORT:-63799}"; DURABLE=1 ;;
  test) PGPORT="${ND_PG_PORT:-54339}"; REDIS_PORT="${ND_REDIS_PORT:-63809}"; DURABLE=0 ;;
  *) echo "unknown profile: $PROFILE" >&2; exit 2 ;;
esac
PGBIN="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)"
DATA="$ROOT/.data/$PROFILE"
RDIR="$DATA/redis"
# The app connects as APP_ROLE, which owns nothing, so row-level security holds
# it; migrations run as postgres, the owner (DATABASE_OWNER_URL).
APP_ROLE=newsdesk_app

as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }

# PostgreSQL refuses to run as root and must traverse every parent folder of
# its data directory. CI may clone where the postgres user cannot reach; then
# the cluster lives in a postgres-owned folder named after this checkout.
pg_dir() {
  local preferred="$DATA/pg"
  mkdir -p "$preferred"
  if [ "$(id -u)" != 0 ] || runuser -u postgres -- test -x "$DATA" 2>/dev/null; then
    echo "$preferred"
  else
    local key; key="$(printf '%s' "$ROOT" | sha1sum | cut -c1-12)"
    echo "/var/lib/postgresql/newsdesk-$key-$PROFILE"
  fi
}

pg_start() {
  local dir; dir="$(pg_dir)"; local pgdata="$dir/data" sock="$dir/sock"
  mkdir -p "$pgdata" "$sock"
  if [ "$(id -u)" = 0 ]; then chown -R postgres:postgres "$dir"; fi
  chmod 700 "$pgdata"
  [ "$dir" = "$DATA/pg" ] || echo "postgresql: $ROOT is not reachable by the postgres user; cluster kept in $dir" >&2
  if [ ! -f "$pgdata/PG_VERSION" ]; then
    as_pg "$PGBIN/initdb" -D "$pgdata" -U postgres -A trust -E UTF8 --locale=C.UTF-8 --no-sync >"$dir/initdb.log"
  fi
  if as_pg "$PGBIN/pg_ctl" -D "$pgdata" status >/dev/null 2>&1; then app_role; return 0; fi
  local opts="-p $PGPORT -k $sock -c listen_addresses=127.0.0.1 -c max_connections=300"
  [ "$DURABLE" = 1 ] || opts="$opts -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
  as_pg "$PGBIN/pg_ctl" -D "$pgdata" -l "$dir/server.log" -w -t 60 start -o "$opts" >/dev/null
  for _ in $(seq 60); do "$PGBIN/pg_isready" -q -h 127.0.0.1 -p "$PGPORT" && break; sleep 0.5; done
  app_role
  echo "postgresql started"
}

# The app's role: may log in, owns nothing, no superuser, no BYPASSRLS.
app_role() {
  "$PGBIN/psql" -q -h 127.0.0.1 -p "$PGPORT" -U postgres -d postgres -v ON_ERROR_STOP=1 -c \
    "DO \$\$ BEGIN CREATE ROLE $APP_ROLE LOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END \$\$" \
    >/dev/null
}

pg_stop() {
  local dir; dir="$(pg_dir)"
  [ -f "$dir/data/PG_VERSION" ] || return 0
  if as_pg "$PGBIN/pg_ctl" -D "$dir/data" status >/dev/null 2>&1; then
    as_pg "$PGBIN/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null
  fi
}

redis_start() {
  mkdir -p "$RDIR"
  if [ -f "$RDIR/redis.pid" ] && kill -0 "$(cat "$RDIR/redis.pid")" 2>/dev/null; then return 0; fi
  local persist=(--save '' --appendonly no)
  [ "$DURABLE" = 1 ] && persist=(--save 60 1000 --appendonly no)
  redis-server --bind 127.0.0.1 --port "$REDIS_PORT" "${persist[@]}" --dir "$RDIR" \
    --daemonize yes --pidfile "$RDIR/redis.pid" --logfile "$RDIR/redis.log" --databases 64
  for _ in $(seq 60); do [ "$(redis-cli -p "$REDIS_PORT" ping 2>/dev/null)" = PONG ] && break; sleep 0.2; done
  echo "redis started"
}

redis_stop() {
  [ -f "$RDIR/redis.pid" ] || return 0
  local pid; pid="$(cat "$RDIR/redis.pid")"
  if kill -0 "$pid" 2>/dev/null; then
    kill "$pid"; while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
  fi
  rm -f "$RDIR/redis.pid"
}

case "$ACTION" in
  start) pg_start; redis_start ;;
  stop) redis_stop; pg_stop ;;
  stop-these)
    case "${3:-}" in *redis*) redis_stop ;; esac
    case "${3:-}" in *postgresql*) pg_stop ;; esac ;;
  status) "$PGBIN/pg_isready" -h 127.0.0.1 -p "$PGPORT" || true; redis-cli -p "$REDIS_PORT" ping || true ;;
  env)
    echo "DATABASE_URL=postgresql://$APP_ROLE@127.0.0.1:$PGPORT/newsdesk"
    echo "DATABASE_OWNER_URL=postgresql://postgres@127.0.0.1:$PGPORT/newsdesk"
    echo "REDIS_URL=redis://127.0.0.1:$REDIS_PORT/0" ;;
  *) echo "usage: $0 start|stop|stop-these|status|env run|test [started]" >&2; exit 2 ;;
esac
