"""Settings: one documented table (docs/configuration.md), validated at start.

Values come from the environment and from `.env`. They are read once by the
entry points (`python -m app`, the worker) and passed in; no module keeps an
import-time copy.
"""

from __future__ import annotations

import sys
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import Field, SecretStr, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict


def _split_list(value: object) -> object:
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    return value


def _postgres_url(value: str) -> str:
    parts = urlsplit(value)
    if parts.scheme not in {"postgres", "postgresql"} or not parts.hostname:
        raise ValueError("must look like postgresql://user@host:port/database")
    if not parts.path.strip("/"):
        raise ValueError("must name a database, e.g. postgresql://user@host:5432/newsdesk")
    return value


def _is_origin(value: str) -> bool:
    """scheme://host[:port] and nothing more (no path, query or user)."""
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018 - raises on a port that is not a number
    except ValueError:
        return False
    return (
        parts.scheme in {"http", "https"}
        and bool(parts.hostname)
        and parts.path in {"", "/"}
        and not parts.query
        and not parts.fragment
        and "@" not in parts.netloc
    )


class Settings(BaseSettings):
    """Everything Newsdesk can be told from outside. See docs/configuration.md."""

    model_config = SettingsConfigDict(env_file=".env", extra="ignore", frozen=True)

    database_url: str = Field(
        description="PostgreSQL URL, postgresql://user:password@host:port/database"
    )
    database_owner_url: str = Field(
        default="",
        description="PostgreSQL URL of the role that owns the tables, for migrations; "
        "empty: DATABASE_URL",
    )
    redis_url: str = Field(description="Redis URL, redis://host:port/db")
    secret_key: SecretStr = Field(
        min_length=32,
        description="Signs sessions, CSRF tokens and media URLs; at least 32 characters",
    )
    base_url: str = Field(
        default="http://127.0.0.1:8000",
        description="The address people use to reach Newsdesk; https turns on Secure cookies"
        " (unset: http://HOST:PORT)",
    )
    host: str = Field(default="127.0.0.1", description="Address uvicorn listens on")
    port: int = Field(default=8000, ge=1, le=65535, description="Port uvicorn listens on")
    redis_prefix: str = Field(
        default="nd",
        pattern=r"^[A-Za-z0-9_.-]{1,40}$",
        description="Prefix of every Redis key, channel and queue of this installation",
    )
    worker_max_jobs: int = Field(
        default=10, ge=1, le=500, description="Jobs one worker runs at once"
    )
    reading_processes: int = Field(
        default=2,
        ge=1,
        le=64,
        description="Processes one worker reads fetched pages in (trafilatura, the sanitiser),"
        " beside its event loop: about the machine's cores",
    )
    reading_seconds: float = Field(
        default=60.0,
        ge=0.1,
        le=3600,
        description="Longest a fetched page may take to read; a slower one fails and its"
        " reader is stopped",
    )
    db_pool_max: int = Field(
        default=10, ge=2, le=200, description="PostgreSQL connections per process"
    )
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = Field(
        default="INFO", description="How much the server and workers log"
    )
    login_attempts_per_15min: int = Field(
        default=10, ge=1, le=1000, description="Failed logins allowed per address and account"
    )
    login_attempts_per_account_hour: int = Field(
        default=50,
        ge=1,
        le=10_000,
        description="Failed logins allowed per account from all addresses in an hour",
    )
    password_hashing: Literal["standard", "fast"] = Field(
        default="standard",
        description="argon2 cost: 'standard' (recommended); 'fast' only for test suites",
    )
    viewers_create_workspaces: bool = Field(
        default=False,
        description="Whether people who are only viewers may start workspaces of their own",
    )
    session_days: int = Field(
        default=30, ge=1, le=365, description="Idle days before a session ends"
    )

    # Mail (app/core/mail.py): password reset links. No SMTP_HOST, no mail.
    smtp_host: str = Field(
        default="", description="SMTP server that sends password reset mail; empty: no mail"
    )
    smtp_port: int = Field(default=587, ge=1, le=65535, description="Port of SMTP_HOST")
    smtp_user: str = Field(default="", description="SMTP user name; empty: no login")
    smtp_password: SecretStr = Field(default=SecretStr(""), description="SMTP password")
    smtp_from: str = Field(
        default="", description="From address of Newsdesk's mail; required with SMTP_HOST"
    )
    smtp_tls: Literal["starttls", "tls", "none"] = Field(
        default="starttls",
        description="starttls (port 587), tls (implicit, port 465) or none (a local relay)",
    )

    # Egress: every outbound request (app/egress).
    egress_allow: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description="host:port entries egress may reach although they are not public "
        "(tests and the offline demo only); empty in production",
    )
    egress_divert: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description="origin=target entries, e.g. https://bsky.social=http://127.0.0.1:8701: "
        "requests for that origin go to the target instead (the offline demo only)",
    )
    egress_extra_ports: Annotated[list[int], NoDecode] = Field(
        default_factory=list, description="Ports beyond 80 and 443 that egress may connect to"
    )
    egress_user_agent: str = Field(
        default="Newsdesk/0.1 (+https://github.com/newsdesk; self-hosted newsroom)",
        description="User-Agent of every outbound request",
    )
    egress_connect_timeout: float = Field(
        default=5.0, gt=0, le=60, description="Seconds to connect"
    )
    egress_read_timeout: float = Field(
        default=15.0, gt=0, le=300, description="Seconds to wait for each read"
    )
    egress_total_timeout: float = Field(
        default=30.0,
        gt=0,
        le=600,
        description="Seconds one request may take in all, redirects included",
    )
    egress_max_bytes: int = Field(
        default=10_000_000, ge=1024, description="Largest body egress reads"
    )
    egress_host_rate: float = Field(
        default=2.0,
        gt=0,
        description="Default requests per second per host, shared by all processes",
    )
    egress_host_burst: int = Field(default=5, ge=1, description="Default burst per host")
    egress_host_inflight: int = Field(
        default=4, ge=1, description="Default requests in flight per host"
    )
    egress_host_budgets: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description="Per-host overrides host=rate/burst/inflight, e.g. export.arxiv.org=0.333/1/1",
    )

    # Media proxy.
    media_max_bytes: int = Field(
        default=15_000_000, ge=1024, description="Largest proxied media file"
    )

    # Analysis (app/analysis).
    analysis_endpoint: str = Field(
        default="",
        description="OpenAI-compatible chat completions base URL; empty = local analyser",
    )
    analysis_api_key: SecretStr = Field(
        default=SecretStr(""), description="Bearer key for ANALYSIS_ENDPOINT, if it needs one"
    )
    analysis_model: str = Field(
        default="gpt-4o-mini", description="Model name sent to ANALYSIS_ENDPOINT"
    )

    # Bulk import (app/imports).
    import_max_urls: int = Field(
        default=5000, ge=1, le=100_000, description="Most URLs one import job may hold"
    )
    import_in_flight_per_job: int = Field(
        default=3, ge=1, le=50, description="Items of one import job read at the same time"
    )
    import_worker_loops: int = Field(
        default=4,
        ge=1,
        le=100,
        description="Import items one worker process reads at the same time, all jobs together",
    )
    import_lease_seconds: float = Field(
        default=60.0,
        ge=2,
        le=3600,
        description="How long a worker holds an import item; renewed every half of it",
    )

    @field_validator(
        "egress_allow", "egress_divert", "egress_extra_ports", "egress_host_budgets", mode="before"
    )
    @classmethod
    def _lists(cls, value: object) -> object:
        return _split_list(value)

    @field_validator("database_url")
    @classmethod
    def _database_url(cls, value: str) -> str:
        return _postgres_url(value)

    @field_validator("database_owner_url")
    @classmethod
    def _database_owner_url(cls, value: str) -> str:
        return _postgres_url(value) if value else value

    @property
    def migration_url(self) -> str:
        """Where migrations run: the owner's connection, else the app's."""
        return self.database_owner_url or self.database_url

    @field_validator("redis_url")
    @classmethod
    def _redis_url(cls, value: str) -> str:
        parts = urlsplit(value)
        if parts.scheme not in {"redis", "rediss"} or not parts.hostname:
            raise ValueError("must look like redis://host:port/0")
        return value

    @field_validator("base_url")
    @classmethod
    def _base_url(cls, value: str) -> str:
        parts = urlsplit(value)
        if parts.scheme not in {"http", "https"} or not parts.hostname:
            raise ValueError("must be an http:// or https:// address")
        return value.rstrip("/")

    @field_validator("egress_allow")
    @classmethod
    def _host_ports(cls, value: list[str]) -> list[str]:
        for entry in value:
            host, sep, port = entry.rpartition(":")
            if not sep or not host or not port.isdigit():
                raise ValueError(f"{entry!r} is not host:port")
        return [entry.lower() for entry in value]

    @field_validator("egress_divert")
    @classmethod
    def _diverts(cls, value: list[str]) -> list[str]:
        for entry in value:
            origin, sep, target = entry.partition("=")
            if not sep or not _is_origin(origin.strip()) or not _is_origin(target.strip()):
                raise ValueError(
                    f"{entry!r} is not origin=target, e.g. https://bsky.social=http://127.0.0.1:8701"
                )
        return [entry.strip() for entry in value]

    @model_validator(mode="before")
    @classmethod
    def _base_url_from_host_and_port(cls, data: Any) -> Any:
        """Unset, BASE_URL is where this server listens (invitation links, the demo's banner):
        PORT=9000 alone must not send people to port 8000."""
        if isinstance(data, dict) and not data.get("base_url"):
            fields = cls.model_fields
            host = str(data.get("host") or fields["host"].default)
            if host in {"0.0.0.0", "::"}:  # noqa: S104 - every address: name one of them
                host = "127.0.0.1"
            host = f"[{host}]" if ":" in host else host
            port = data.get("port") or fields["port"].default
            data = {**data, "base_url": f"http://{host}:{port}"}
        return data

    @model_validator(mode="after")
    def _mail_sender(self) -> Settings:
        if self.smtp_host and "@" not in self.smtp_from:
            raise ValueError(
                "SMTP_FROM must be an address, e.g. newsdesk@example.org, with SMTP_HOST"
            )
        return self

    @property
    def mail_configured(self) -> bool:
        return bool(self.smtp_host)

    @property
    def secure_cookies(self) -> bool:
        return self.base_url.startswith("https://")

    def redis_key(self, *parts: object) -> str:
        """A Redis key or channel name inside this installation's prefix."""
        return ":".join([self.redis_prefix, *(str(p) for p in parts)])


def describe_error(error: ValidationError) -> str:
    """One line naming the first bad setting; never echoes a value."""
    first = error.errors()[0]
    name = str(first["loc"][0]).upper() if first["loc"] else "settings"
    message = first["msg"]
    if first["type"] == "missing":
        message = "is required (set it in the environment or in .env)"
    elif first["type"] == "too_short":
        message = f"must be at least {first.get('ctx', {}).get('min_length')} characters long"
    return f"newsdesk: setting {name} {message}"


def load_settings(**overrides: object) -> Settings:
    """Read settings; on a bad value print one clear line and exit 2."""
    try:
        return Settings(**overrides)  # type: ignore[arg-type]
    except ValidationError as error:
        print(describe_error(error), file=sys.stderr)
        raise SystemExit(2) from None


def redact_url(url: str) -> str:
    """host:port/db of a service URL, without user or password, for messages."""
    parts = urlsplit(url)
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{parts.hostname}{port}{parts.path}"


_active: Settings | None = None


def activate(settings: Settings) -> None:
    """Make `settings` this process's settings (called by the entry points)."""
    global _active
    _active = settings


def active() -> Settings:
    """This process's settings, as passed to the app factory or the worker."""
    if _active is None:
        raise RuntimeError("settings are not activated (app.core.config.activate)")
    return _active
