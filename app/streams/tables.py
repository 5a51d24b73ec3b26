"""Piccolo tables of the wall. The schema itself lives in migrations/m0007_streams.py."""

from piccolo.columns import (
    JSONB,
    BigInt,
    BigSerial,
    Boolean,
    Bytea,
    Integer,
    Numeric,
    Text,
    Timestamptz,
)
from piccolo.table import Table


class StreamConnection(Table, tablename="stream_connections"):
    """A connected account on a platform (its token sealed by app.vault)."""

    id = BigSerial(primary_key=True)
    workspace_id = BigInt()
    provider = Text()  # "mastodon", "bluesky", ...
    instance = Text(default="")  # IDNA host for instance-based providers, else ""
    handle = Text()
    display_name = Text(default="")
    credentials = Bytea(null=True, default=None)  # vault-sealed; context "ws:<ws>:connection:<id>"
    created_by = BigInt(null=True, default=None)
    created_at = Timestamptz()
    deleted_at = Timestamptz(null=True, default=None)


class StreamCredential(Table, tablename="stream_credentials"):
    """A workspace-level key for keyless sources (YouTube API key, X bearer, Bluesky app password)."""

    workspace_id = BigInt(primary_key=True)  # with provider: the real key (Piccolo needs one)
    provider = Text()
    label = Text(default="")
    sealed = Bytea()  # vault-sealed; context "ws:<ws>:credential:<provider>"
    updated_at = Timestamptz()


class StreamColumn(Table, tablename="stream_columns"):
    id = BigSerial(primary_key=True)
    workspace_id = BigInt()
    type = Text()  # platform_feed | keyword | account_list | saved_search
    title = Text()  # 1..80 characters
    position = Integer()  # dense, unique among live columns of the workspace
    spec = JSONB()  # validated per type (spec.py), never stored invalid
    refresh_policy = JSONB(default="{}")  # {"interval_ms"?: int, "paused"?: bool}, as asked
    created_by = BigInt(null=True, default=None)
    created_at = Timestamptz()
    updated_at = Timestamptz()
    deleted_at = Timestamptz(null=True, default=None)


class StreamSource(Table, tablename="stream_sources"):
    """One thing the scheduler polls, shared by every column that needs it."""

    id = BigSerial(primary_key=True)
    workspace_id = BigInt()
    provider = Text()
    kind = Text()  # home | mentions | search | author
    connection_id = BigInt(null=True, default=None)  # None: keyless
    query = Text(default="")  # the provider-adapted query (search)
    actor_ref = Text(default="")  # canonical account ref (author), "<provider>:<ref>"
    label = Text(default="")  # what people typed or see: the handle, the query
    state = Text(default="pending")  # see types.SourceState
    last_error = Text(default="")
    last_polled_at = Timestamptz(null=True, default=None)
    next_poll_at = Timestamptz()
    consecutive_failures = Integer(default=0)
    cursor = Text(default="")  # the provider's "since" position, opaque
    interval_ms = Integer(default=120_000)  # the most demanding linked column's, clamped
    active = Boolean(default=True)  # some live, unpaused column needs it
    lease_until = Timestamptz(null=True, default=None)  # a worker is polling it until then
    created_at = Timestamptz()


class StreamColumnSource(Table, tablename="stream_column_sources"):
    workspace_id = BigInt()
    column_id = BigInt(primary_key=True)  # with source_id: the real key
    source_id = BigInt()


class FeedItem(Table, tablename="feed_items"):
    id = BigSerial(primary_key=True)
    workspace_id = BigInt()
    dedup_key = Text()  # sha256 hex of workspace|provider|canonical remote id
    provider = Text()
    remote_id = Text()
    author_handle = Text(default="")
    author_ref = Text(default="")
    url = Text(default="")  # http(s) permalink or ""
    created_at_remote = Timestamptz()  # the provider's time: the sort key
    fetched_at = Timestamptz()  # last sighting
    content = JSONB()  # app.safe_content Document, never HTML
    plain_text = Text(default="")
    media = JSONB(default="[]")  # [{"kind", "url", "alt"}]; shown only through the media proxy
    metrics = JSONB(default="{}")  # finite numbers only
    source_id = BigInt(null=True, default=None)  # the source that first saw it
    expires_at = Timestamptz(null=True, default=None)
    reposted_by = Text(default="")  # who boosted/reposted it, when it came as a repost
    lang = Text(
        default=""
    )  # the content's language as the platform tagged it ("de", "pt-BR"); "" unknown


class FeedItemColumn(Table, tablename="feed_item_columns"):
    workspace_id = BigInt()
    column_id = BigInt(primary_key=True)  # with item_id: the real key
    item_id = BigInt()
    created_at_remote = Timestamptz()  # copied from the item: the column's keyset
    dedup_key = Text()


class FeedItemSave(Table, tablename="feed_item_saves"):
    """An item saved to the library from the wall: the one-URL import job that saves it."""

    workspace_id = BigInt()
    item_id = BigInt(primary_key=True)
    job_id = BigInt()
    created_at = Timestamptz()


class ProviderBudgetLedger(Table, tablename="provider_budget_ledger"):
    workspace_id = BigInt(primary_key=True)  # with provider, bucket, window_start: the key
    provider = Text()
    bucket = Text()  # e.g. "yt_search_calls", "x_post_reads"
    window_start = Timestamptz()
    units_used = Numeric()
    units_cap = Numeric()


class ProviderLedgerSubject(Table, tablename="provider_ledger_subjects"):
    """A distinct subject of a rolling ledger (an Instagram hashtag) and when its use began."""

    workspace_id = BigInt(primary_key=True)  # with provider, bucket, subject: the key
    provider = Text()
    bucket = Text()
    subject = Text()
    first_used_at = Timestamptz()
