"""Password reset links: one-time, short-lived, stored only as a hash.

Instance-wide like users and sessions (no workspace_id): a person resets the
password of their account, whatever workspaces it belongs to.
"""

from app.core.db import sql_migration

ID = "2026-12-01T10:00:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "password reset links"

SQL = """
CREATE TABLE password_resets (
    id bigserial PRIMARY KEY,
    user_id bigint NOT NULL REFERENCES users ON DELETE CASCADE,
    token_hash text NOT NULL UNIQUE,
    created_by bigint REFERENCES users ON DELETE SET NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL,
    used_at timestamptz
);
CREATE INDEX password_resets_user ON password_resets (user_id);
"""


forwards = sql_migration(ID, DESCRIPTION, SQL)
