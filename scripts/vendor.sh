#!/usr/bin/env bash
# Installs third-party browser files under static/vendor/ (ignored by git).
# Datastar 1.0.1, the client build that matches datastar-py 1.0.3, comes from
# the MIT-licensed copy inside the starhtml 0.7.0 wheel on PyPI; its sha256
# is checked so a changed upstream file fails loudly instead of silently.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PY="${PY:-$ROOT/.venv/bin/python}"
DEST="$ROOT/static/vendor/datastar.js"
SHA=31c8c9efb895beadeba5f73407c3ca60201dee321c5dea56c182817b475bde9f
if [ -f "$DEST" ] && echo "$SHA  $DEST" | sha256sum -c --status; then exit 0; fi
CACHE="$ROOT/.data/cache/wheels"; mkdir -p "$CACHE" "$(dirname "$DEST")"
"$PY" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 -d "$CACHE" starhtml==0.7.0
"$PY" - "$CACHE" "$DEST" <<'PYEOF'
import sys, zipfile, pathlib
cache, dest = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
wheel = next(cache.glob("starhtml-0.7.0-*.whl"))
with zipfile.ZipFile(wheel) as zf:
    dest.write_bytes(zf.read("starhtml/static/js/datastar-core.js"))
PYEOF
echo "$SHA  $DEST" | sha256sum -c --status || { echo "datastar.js checksum mismatch" >&2; rm -f "$DEST"; exit 1; }
echo "vendored Datastar 1.0.1 into static/vendor/datastar.js"
