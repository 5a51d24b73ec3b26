"""The command line as an operator runs it: `python -m app ...` in its own process,
without a terminal, on the test services."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.fixtures import make_test_settings

ROOT = Path(__file__).resolve().parents[1]
LOCALE_VARIABLES = ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG")


def run_cli(
    *args: str, lang: str = "C.UTF-8", database_url: str = "", redis_url: str = ""
) -> subprocess.CompletedProcess[str]:
    """`python -m app args...`, its locale environment set to `lang`."""
    test = make_test_settings()
    env = {k: v for k, v in os.environ.items() if k not in LOCALE_VARIABLES}
    env |= {
        "LANG": lang,
        "DATABASE_URL": database_url or test.database_url,
        "REDIS_URL": redis_url or test.redis_url,
        "REDIS_PREFIX": test.redis_prefix,
        "SECRET_KEY": test.secret_key.get_secret_value(),
        "BASE_URL": test.base_url,
        "PASSWORD_HASHING": "fast",
    }
    return subprocess.run(
        [sys.executable, "-m", "app", *args],
        cwd=ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
