"""Accounts, workspaces, sessions, API tokens, invitations and the event log."""

from app.core.db import sql_migration

ID = "2026-11-30T01:00:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "accounts and events"

SQL = """
CREATE TABLE users (
    id bigserial PRIMARY KEY,
    email text NOT NULL CHECK (email <> ''),
    display_name text NOT NULL,
    password_hash text NOT NULL,
    locale text NOT NULL DEFAULT 'en',
    time_zone text NOT NULL DEFAULT 'UTC',
    is_active boolean NOT NULL DEFAULT true,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX users_email_key ON users (lower(email));

CREATE TABLE workspaces (
    id bigserial PRIMARY KEY,
    name text NOT NULL CHECK (name <> ''),
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE memberships (
    id bigserial PRIMARY KEY,
    workspace_id bigint NOT NULL REFERENCES workspaces ON DELETE CASCADE,
    user_id bigint NOT NULL REFERENCES users ON DELETE CASCADE,
    role text NOT NULL CHECK (role IN ('owner', 'admin', 'editor', 'viewer')),
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (workspace_id, user_id)
);
CREATE INDEX memberships_user ON memberships (user_id);

CREATE TABLE sessions (
    id bigserial PRIMARY KEY,
    token_hash text NOT NULL UNIQUE,
    user_id bigint NOT NULL REFERENCES users ON DELETE CASCADE,
    workspace_id bigint REFERENCES workspaces ON DELETE SET NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    last_seen_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL,
    user_agent text NOT NULL DEFAULT ''
);
CREATE INDEX sessions_user ON sessions (user_id);

CREATE TABLE api_tokens (
    id bigserial PRIMARY KEY,
    workspace_id bigint NOT NULL REFERENCES workspaces ON DELETE CASCADE,
    user_id bigint NOT NULL REFERENCES users ON DELETE CASCADE,
    name text NOT NULL,
    token_hash text NOT NULL UNIQUE,
    prefix text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    last_used_at timestamptz,
    revoked_at timestamptz
);
CREATE INDEX api_tokens_user ON api_tokens (workspace_id, user_id);

CREATE TABLE invitations (
    id bigserial PRIMARY KEY,
    workspace_id bigint NOT NULL REFERENCES workspaces ON DELETE CASCADE,
    token_hash text NOT NULL UNIQUE,
    role text NOT NULL CHECK (role IN ('admin', 'editor', 'viewer')),
    email text NOT NULL DEFAULT '',
    created_by bigint NOT NULL REFERENCES users ON DELETE CASCADE,
    created_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL,
    accepted_at timestamptz,
    accepted_by bigint REFERENCES users ON DELETE SET NULL
);
CREATE INDEX invitations_workspace ON invitations (workspace_id, created_at DESC);

CREATE TABLE events (
    id bigserial PRIMARY KEY,
    workspace_id bigint NOT NULL REFERENCES workspaces ON DELETE CASCADE,
    kind text NOT NULL,
    actor_user_id bigint REFERENCES users ON DELETE SET NULL,
    subject text NOT NULL DEFAULT '',
    data jsonb NOT NULL DEFAULT '{}',
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX events_workspace_recent ON events (workspace_id, id DESC);
"""


forwards = sql_migration(ID, DESCRIPTION, SQL)
