#!/usr/bin/env bash
# Installs what is missing, and nothing twice:
#   Debian packages (PostgreSQL server, Redis; Chromium with --browser; neither server
#   with --worker, for a machine whose workers or web servers use them elsewhere),
#   the virtualenv in .venv with the project, and the vendored browser files.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"; cd "$ROOT"
WITH_BROWSER=0; WORKER=0
for arg in "$@"; do
  case "$arg" in --browser) WITH_BROWSER=1 ;; --worker) WORKER=1 ;; esac
done

missing=()
if [ "$WORKER" = 0 ]; then
  ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1 || missing+=(postgresql)
  command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
fi
[ "$WITH_BROWSER" = 1 ] && ! command -v chromium >/dev/null 2>&1 && missing+=(chromium)
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "setup: please install these Debian packages (as root): ${missing[*]}" >&2; exit 1
  fi
  echo "setup: installing ${missing[*]} (Debian packages)"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi
PY="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  echo "setup: creating .venv"
  "$PY" -m venv .venv
fi
STAMP=.venv/.installed
if [ ! -f "$STAMP" ] || [ pyproject.toml -nt "$STAMP" ]; then
  echo "setup: installing Newsdesk and its dependencies into .venv"
  .venv/bin/python -m pip install -q --disable-pip-version-check -e '.[dev]' 2>&1 | grep -v "is ignored" || true
  .venv/bin/python -c "import app, litestar, piccolo, arq, playwright" 
  touch "$STAMP"
fi
PY="$ROOT/.venv/bin/python" scripts/vendor.sh 2>&1 | grep -v "is ignored" || true
test -f static/vendor/datastar.js
# The UI's translations: app/locale/*/LC_MESSAGES/messages.po -> .mo (not kept in git).
.venv/bin/python -c "from app.core.i18n import compile_catalogs; compile_catalogs()"
# The hot safe_content modules compiled with mypyc (build/safe_content-native/, only for these
# very sources; docs/decisions/safe-content.md). Without a C compiler the pure modules run.
.venv/bin/python -c "import sys; from app.safe_content.native import main; sys.exit(main())" || true
