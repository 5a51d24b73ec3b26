"""Settings: validated at start; a bad or unreachable one is one clear line and exit 2."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from app.core.config import Settings
from tests.fixtures import make_test_settings

ROOT = Path(__file__).resolve().parents[2]
GOOD = {
    "DATABASE_URL": "postgresql://newsdesk:hunter2secret@127.0.0.1:1/newsdesk",
    "REDIS_URL": "redis://127.0.0.1:1/0",
    "SECRET_KEY": "k" * 40,
}


def _run(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if k not in GOOD and not k.startswith("EGRESS_")}
    return subprocess.run(
        [sys.executable, "-m", "app", *args],
        env={**clean, **env},
        cwd=ROOT / "tests",  # no .env there
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize(
    ("override", "expected"),
    [
        ({"SECRET_KEY": "short"}, "setting SECRET_KEY must be at least 32 characters long"),
        ({"DATABASE_URL": "mysql://x/y"}, "setting DATABASE_URL"),
        ({"REDIS_URL": ""}, "setting REDIS_URL"),
        ({"PORT": "eighty"}, "setting PORT"),
        ({"EGRESS_ALLOW": "nohostport"}, "setting EGRESS_ALLOW"),
    ],
)
def test_a_bad_setting_prints_one_line_and_exits_2(override, expected):
    result = _run({**GOOD, **override}, "check")
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1
    assert expected in lines[0]


def test_a_missing_setting_is_named():
    env = dict(GOOD)
    del env["SECRET_KEY"]
    result = _run(env, "check")
    assert result.returncode == 2
    assert "setting SECRET_KEY is required" in result.stderr


def test_an_unreachable_database_is_named_without_the_password():
    result = _run(GOOD, "check")
    assert result.returncode == 2
    line = result.stderr.strip()
    assert "cannot reach PostgreSQL at postgresql://127.0.0.1:1/newsdesk" in line
    assert "hunter2secret" not in result.stderr + result.stdout


def test_lists_are_read_from_comma_separated_values():
    settings = make_test_settings(
        egress_allow="127.0.0.1:8081, Example.test:443", egress_extra_ports="8081"
    )
    assert settings.egress_allow == ["127.0.0.1:8081", "example.test:443"]
    assert settings.egress_extra_ports == [8081]


def test_https_base_url_turns_on_secure_cookies():
    assert make_test_settings(base_url="https://news.example.org/").secure_cookies
    assert not make_test_settings().secure_cookies
    assert isinstance(make_test_settings(), Settings)


def test_an_unset_base_url_is_where_the_server_listens():
    values = make_test_settings().model_dump(exclude={"base_url"})
    values["secret_key"] = "a-secret-key-that-is-long-enough-0123456789"

    def unset(**overrides: object) -> str:
        return Settings(_env_file=None, **{**values, **overrides}).base_url  # type: ignore[call-arg]

    assert unset(port=9000) == "http://127.0.0.1:9000"
    assert unset(host="0.0.0.0", port=8080) == "http://127.0.0.1:8080"  # every address: this one
    assert unset(host="news.lan") == "http://news.lan:8000"
    assert unset(host="::1", port=8001) == "http://[::1]:8001"
    explicit = Settings(
        _env_file=None, **{**values, "port": 9000, "base_url": "https://news.example.org"}
    )  # type: ignore[call-arg]
    assert explicit.base_url == "https://news.example.org"


def test_every_setting_is_documented():
    doc = (ROOT / "docs" / "configuration.md").read_text()
    missing = [name.upper() for name in Settings.model_fields if f"`{name.upper()}`" not in doc]
    assert missing == []
