"""scripts/setup.sh --worker (README: workers on more machines) installs no database server.

The script runs in a copy of the repository's outline whose virtualenv, vendoring and
Python are stubs, on a PATH without redis-server, as a user who is not root: there the
plain set-up stops and asks for the Debian packages, a worker's set-up does not.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from tests.workers.processes import ROOT

STUB = "#!/bin/sh\nexit 0\n"


def _executable(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o755)


def _sandbox(tmp_path: Path) -> Path:
    root = tmp_path / "newsdesk"
    _executable(root / "scripts" / "setup.sh", (ROOT / "scripts" / "setup.sh").read_text())
    _executable(root / "scripts" / "vendor.sh", STUB)
    (root / "pyproject.toml").write_text("")
    _executable(root / ".venv" / "bin" / "python", STUB)
    (root / ".venv" / ".installed").write_text("")  # newer than pyproject.toml: no pip
    (root / "static" / "vendor").mkdir(parents=True)
    (root / "static" / "vendor" / "datastar.js").write_text("")
    bin_dir = tmp_path / "bin"  # the tools the script uses; no redis-server, not root
    bin_dir.mkdir()
    for tool in ("ls", "dirname", "grep"):
        found = shutil.which(tool)
        assert found is not None
        (bin_dir / tool).symlink_to(found)
    _executable(bin_dir / "id", "#!/bin/sh\necho 1000\n")
    return root


def _setup(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["/bin/bash", str(root / "scripts" / "setup.sh"), *args],
        env={"PATH": str(root.parent / "bin"), "HOME": os.environ.get("HOME", "/root")},
        capture_output=True,
        text=True,
        timeout=30,
    )


def test_a_worker_machine_is_set_up_without_database_or_redis_packages(tmp_path: Path) -> None:
    root = _sandbox(tmp_path)
    plain = _setup(root)
    assert plain.returncode == 1
    assert "redis-server" in plain.stderr
    worker = _setup(root, "--worker")
    assert worker.returncode == 0, worker.stderr
    assert "install" not in worker.stderr
