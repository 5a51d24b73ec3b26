#!/usr/bin/env bash
# Keep children running until Ctrl-C (or TERM): `scripts/supervise.sh NAME=COMMAND ...`.
# A child that exits is started again after a back-off (1 s, doubling up to
# 30 s; back to 1 s once it has run for a minute), with a line saying so.
# Ctrl-C stops every child and waits for them. `make run` uses it for the
# web server and the worker, so one dying never takes the other down.
set -uo pipefail
declare -A command pid delay since
stopping=0

say() { echo "newsdesk: $*" >&2; }

start() {
  local name="$1"
  bash -c "exec ${command[$name]}" &
  pid[$name]=$!
  since[$name]=$SECONDS
}

stop_all() {
  stopping=1
  trap - INT TERM
  for name in "${!pid[@]}"; do kill -TERM "${pid[$name]}" 2>/dev/null || true; done
  for name in "${!pid[@]}"; do wait "${pid[$name]}" 2>/dev/null || true; done
  exit 0
}
trap stop_all INT TERM

for spec in "$@"; do
  name="${spec%%=*}"; command[$name]="${spec#*=}"; delay[$name]=1
  start "$name"
done

while [ "$stopping" = 0 ]; do
  dead=""
  wait -n -p dead "${pid[@]}"; status=$?
  [ -n "$dead" ] || continue  # interrupted by a signal; the trap decides
  for name in "${!pid[@]}"; do
    [ "${pid[$name]}" = "$dead" ] || continue
    if (( SECONDS - since[$name] >= 60 )); then delay[$name]=1; fi
    say "$name exited (status $status); restarting it in ${delay[$name]} s"
    sleep "${delay[$name]}" & wait $!
    delay[$name]=$(( delay[$name] * 2 > 30 ? 30 : delay[$name] * 2 ))
    start "$name"
    say "$name restarted (pid ${pid[$name]})"
  done
done
