"""The command line fails with one clear line, never a traceback."""

import os
import subprocess
import sys
from pathlib import Path

from tests.fixtures import make_test_settings

ROOT = Path(__file__).resolve().parents[2]


def test_create_user_without_a_terminal_asks_nothing_and_says_why(settings):
    test = make_test_settings()
    env = {
        **os.environ,
        "DATABASE_URL": test.database_url,
        "REDIS_URL": test.redis_url,
        "SECRET_KEY": test.secret_key.get_secret_value(),
    }
    done = subprocess.run(
        [sys.executable, "-m", "app", "create-user", "--email", "a@example.org", "--name", "A"],
        cwd=ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "newsdesk: create-user needs --password when it is not run in a terminal"
    ]
    assert "Traceback" not in done.stderr
    assert "Password" not in done.stdout
