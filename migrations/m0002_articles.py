"""The article library: topics and their sources, articles, arXiv metadata, analyses."""

from app.core.db import sql_migration

ID = "2026-11-30T02:00:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "articles, topics, analyses"

SQL = """
CREATE TABLE topics (
    id bigserial PRIMARY KEY,
    workspace_id bigint NOT NULL REFERENCES workspaces ON DELETE CASCADE,
    name text NOT NULL CHECK (name <> ''),
    description text NOT NULL DEFAULT '',
    created_at timestamptz NOT NULL DEFAULT now(),
    deleted_at timestamptz
);
CREATE UNIQUE INDEX topics_name_key ON topics (workspace_id, lower(name)) WHERE deleted_at IS NULL;

CREATE TABLE topic_sources (
    id bigserial PRIMARY KEY,
    workspace_id bigint NOT NULL REFERENCES workspaces ON DELETE CASCADE,
    topic_id bigint NOT NULL REFERENCES topics ON DELETE CASCADE,
    kind text NOT NULL CHECK (kind IN ('feed', 'arxiv')),
    url text NOT NULL DEFAULT '',
    query text NOT NULL DEFAULT '',
    enabled boolean NOT NULL DEFAULT true,
    interval_seconds integer NOT NULL DEFAULT 3600 CHECK (interval_seconds >= 60),
    next_run_at timestamptz NOT NULL DEFAULT now(),
    lease_until timestamptz,
    etag text NOT NULL DEFAULT '',
    last_modified text NOT NULL DEFAULT '',
    failures integer NOT NULL DEFAULT 0,
    last_error text NOT NULL DEFAULT '',
    created_at timestamptz NOT NULL DEFAULT now(),
    CHECK ((kind = 'feed' AND url <> '') OR (kind = 'arxiv' AND query <> ''))
);
CREATE UNIQUE INDEX topic_sources_identity ON topic_sources (workspace_id, topic_id, kind, url, query);
CREATE INDEX topic_sources_due ON topic_sources (next_run_at) WHERE enabled;

CREATE TABLE topic_runs (
    id bigserial PRIMARY KEY,
    workspace_id bigint NOT NULL REFERENCES workspaces ON DELETE CASCADE,
    source_id bigint NOT NULL REFERENCES topic_sources ON DELETE CASCADE,
    status text NOT NULL DEFAULT 'running' CHECK (status IN ('running', 'ok', 'not_modified', 'failed')),
    found integer NOT NULL DEFAULT 0,
    new integer NOT NULL DEFAULT 0,
    duplicates integer NOT NULL DEFAULT 0,
    failures integer NOT NULL DEFAULT 0,
    error text NOT NULL DEFAULT '',
    started_at timestamptz NOT NULL DEFAULT now(),
    finished_at timestamptz
);
CREATE INDEX topic_runs_recent ON topic_runs (workspace_id, source_id, started_at DESC);

CREATE TABLE articles (
    id bigserial PRIMARY KEY,
    workspace_id bigint NOT NULL REFERENCES workspaces ON DELETE CASCADE,
    url text NOT NULL,
    url_hash text NOT NULL CHECK (length(url_hash) = 64),
    source text NOT NULL,
    title text NOT NULL DEFAULT '',
    byline text NOT NULL DEFAULT '',
    site_name text NOT NULL DEFAULT '',
    language text NOT NULL DEFAULT '',
    published_at timestamptz,
    topic_id bigint REFERENCES topics ON DELETE SET NULL,
    content jsonb NOT NULL,
    text text NOT NULL DEFAULT '',
    word_count integer NOT NULL DEFAULT 0,
    lead_image text NOT NULL DEFAULT '',
    metadata jsonb NOT NULL DEFAULT '{}',
    warnings text[] NOT NULL DEFAULT '{}',
    search tsvector GENERATED ALWAYS AS (
        setweight(to_tsvector('simple', coalesce(title, '')), 'A')
        || setweight(to_tsvector('simple', coalesce(byline, '') || ' ' || coalesce(site_name, '')), 'C')
        || setweight(to_tsvector('simple', left(text, 400000)), 'B')
    ) STORED,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    deleted_at timestamptz,
    UNIQUE (workspace_id, url_hash)
);
CREATE INDEX articles_search ON articles USING gin (search);
CREATE INDEX articles_recent ON articles (workspace_id, created_at DESC, id DESC);
CREATE INDEX articles_topic ON articles (workspace_id, topic_id, created_at DESC);

CREATE TABLE arxiv_metadata (
    id bigserial PRIMARY KEY,
    workspace_id bigint NOT NULL REFERENCES workspaces ON DELETE CASCADE,
    article_id bigint NOT NULL REFERENCES articles ON DELETE CASCADE,
    arxiv_id text NOT NULL DEFAULT '',
    authors jsonb NOT NULL DEFAULT '[]',
    pdf_available boolean NOT NULL DEFAULT false,
    pdf_url text NOT NULL DEFAULT '',
    sections jsonb NOT NULL DEFAULT '[]',
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (workspace_id, article_id)
);

CREATE TABLE analyses (
    id bigserial PRIMARY KEY,
    workspace_id bigint NOT NULL REFERENCES workspaces ON DELETE CASCADE,
    article_id bigint NOT NULL REFERENCES articles ON DELETE CASCADE,
    status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'running', 'completed', 'failed')),
    summary text NOT NULL DEFAULT '',
    keywords jsonb NOT NULL DEFAULT '[]',
    language text NOT NULL DEFAULT '',
    reading_minutes integer NOT NULL DEFAULT 0,
    analyser text NOT NULL DEFAULT '',
    error text NOT NULL DEFAULT '',
    attempts integer NOT NULL DEFAULT 0,
    next_attempt_at timestamptz NOT NULL DEFAULT now(),
    lease_until timestamptz,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    completed_at timestamptz,
    UNIQUE (workspace_id, article_id)
);
CREATE INDEX analyses_due ON analyses (next_attempt_at) WHERE status IN ('pending', 'running', 'failed');
"""


forwards = sql_migration(ID, DESCRIPTION, SQL)
