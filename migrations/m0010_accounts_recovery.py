"""Password reset links: one-time, short-lived, stored only as a hash.

Instance-wide like users and sessions (no workspace_id): a person resets the
password of their account, whatever workspaces it belongs to.
"""

from piccolo.apps.migrations.auto.migration_manager import MigrationManager

from app.core.db import execute_ddl

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


async def forwards() -> MigrationManager:
    manager = MigrationManager(migration_id=ID, app_name="newsdesk", description=DESCRIPTION)

    async def run() -> None:
        await execute_ddl(SQL)

    manager.add_raw(run)
    return manager
