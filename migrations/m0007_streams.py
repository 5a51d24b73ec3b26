"""The wall: columns, shared sources, stored feed items, connections, credentials, ledger."""

from app.core.db import sql_migration

ID = "2026-12-01T07:00:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "stream columns, sources, feed items"

SQL = """
CREATE TABLE stream_connections (
    id bigserial PRIMARY KEY,
    workspace_id bigint NOT NULL REFERENCES workspaces ON DELETE CASCADE,
    provider text NOT NULL,
    instance text NOT NULL DEFAULT '',
    handle text NOT NULL,
    display_name text NOT NULL DEFAULT '',
    credentials bytea,
    created_by bigint REFERENCES users ON DELETE SET NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    deleted_at timestamptz
);
CREATE UNIQUE INDEX stream_connections_identity ON stream_connections
    (workspace_id, provider, instance, lower(handle)) WHERE deleted_at IS NULL;

CREATE TABLE stream_credentials (
    workspace_id bigint NOT NULL REFERENCES workspaces ON DELETE CASCADE,
    provider text NOT NULL,
    label text NOT NULL DEFAULT '',
    sealed bytea NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (workspace_id, provider)
);

CREATE TABLE stream_columns (
    id bigserial PRIMARY KEY,
    workspace_id bigint NOT NULL REFERENCES workspaces ON DELETE CASCADE,
    type text NOT NULL CHECK (type IN ('platform_feed', 'keyword', 'account_list', 'saved_search')),
    title text NOT NULL CHECK (char_length(title) BETWEEN 1 AND 80),
    position integer NOT NULL,
    spec jsonb NOT NULL,
    refresh_policy jsonb NOT NULL DEFAULT '{}',
    created_by bigint REFERENCES users ON DELETE SET NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    deleted_at timestamptz
);
CREATE UNIQUE INDEX stream_columns_position ON stream_columns (workspace_id, position)
    WHERE deleted_at IS NULL;

CREATE TABLE stream_sources (
    id bigserial PRIMARY KEY,
    workspace_id bigint NOT NULL REFERENCES workspaces ON DELETE CASCADE,
    provider text NOT NULL,
    kind text NOT NULL CHECK (kind IN ('home', 'mentions', 'search', 'author')),
    connection_id bigint REFERENCES stream_connections ON DELETE SET NULL,
    query text NOT NULL DEFAULT '',
    actor_ref text NOT NULL DEFAULT '',
    label text NOT NULL DEFAULT '',
    state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'ready', 'stale', 'error',
        'unsupported', 'rate_limited', 'budget_paused', 'disabled')),
    last_error text NOT NULL DEFAULT '',
    last_polled_at timestamptz,
    next_poll_at timestamptz NOT NULL DEFAULT now(),
    consecutive_failures integer NOT NULL DEFAULT 0,
    cursor text NOT NULL DEFAULT '',
    interval_ms integer NOT NULL DEFAULT 120000 CHECK (interval_ms >= 1000),
    active boolean NOT NULL DEFAULT true,
    lease_until timestamptz,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX stream_sources_identity ON stream_sources
    (workspace_id, provider, kind, coalesce(connection_id, 0), query, actor_ref);
CREATE INDEX stream_sources_due ON stream_sources (next_poll_at)
    WHERE active AND state NOT IN ('disabled', 'unsupported');
CREATE INDEX stream_sources_connection ON stream_sources (connection_id) WHERE connection_id IS NOT NULL;

CREATE TABLE stream_column_sources (
    workspace_id bigint NOT NULL REFERENCES workspaces ON DELETE CASCADE,
    column_id bigint NOT NULL REFERENCES stream_columns ON DELETE CASCADE,
    source_id bigint NOT NULL REFERENCES stream_sources ON DELETE CASCADE,
    PRIMARY KEY (column_id, source_id)
);
CREATE INDEX stream_column_sources_source ON stream_column_sources (source_id);

CREATE TABLE feed_items (
    id bigserial PRIMARY KEY,
    workspace_id bigint NOT NULL REFERENCES workspaces ON DELETE CASCADE,
    dedup_key text NOT NULL CHECK (length(dedup_key) = 64),
    provider text NOT NULL,
    remote_id text NOT NULL,
    author_handle text NOT NULL DEFAULT '',
    author_ref text NOT NULL DEFAULT '',
    url text NOT NULL DEFAULT '',
    created_at_remote timestamptz NOT NULL,
    fetched_at timestamptz NOT NULL DEFAULT now(),
    content jsonb NOT NULL,
    plain_text text NOT NULL DEFAULT '',
    media jsonb NOT NULL DEFAULT '[]',
    metrics jsonb NOT NULL DEFAULT '{}',
    source_id bigint REFERENCES stream_sources ON DELETE SET NULL,
    expires_at timestamptz,
    UNIQUE (workspace_id, dedup_key)
);
CREATE INDEX feed_items_keyset ON feed_items (workspace_id, created_at_remote DESC, dedup_key DESC);
CREATE INDEX feed_items_fetched ON feed_items (fetched_at);
CREATE INDEX feed_items_expiry ON feed_items (expires_at) WHERE expires_at IS NOT NULL;

-- Which columns show an item. The sort key is copied in, so one column's page
-- is a walk down one index without touching other columns' items.
CREATE TABLE feed_item_columns (
    workspace_id bigint NOT NULL REFERENCES workspaces ON DELETE CASCADE,
    column_id bigint NOT NULL REFERENCES stream_columns ON DELETE CASCADE,
    item_id bigint NOT NULL REFERENCES feed_items ON DELETE CASCADE,
    created_at_remote timestamptz NOT NULL,
    dedup_key text NOT NULL,
    PRIMARY KEY (column_id, item_id)
);
CREATE INDEX feed_item_columns_keyset ON feed_item_columns
    (workspace_id, column_id, created_at_remote DESC, dedup_key DESC);
CREATE INDEX feed_item_columns_item ON feed_item_columns (item_id);

CREATE TABLE provider_budget_ledger (
    workspace_id bigint NOT NULL REFERENCES workspaces ON DELETE CASCADE,
    provider text NOT NULL,
    bucket text NOT NULL,
    window_start timestamptz NOT NULL,
    units_used numeric NOT NULL DEFAULT 0 CHECK (units_used >= 0),
    units_cap numeric NOT NULL CHECK (units_cap >= 0),
    UNIQUE (workspace_id, provider, bucket, window_start)
);
"""


forwards = sql_migration(ID, DESCRIPTION, SQL)
