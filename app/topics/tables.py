"""Piccolo tables of topics. The schema itself lives in migrations/."""

from piccolo.columns import BigInt, BigSerial, Boolean, Integer, Text, Timestamptz
from piccolo.table import Table


class Topic(Table, tablename="topics"):
    id = BigSerial(primary_key=True)
    workspace_id = BigInt()
    name = Text()  # unique per workspace, case-insensitively, among live topics
    description = Text(default="")
    created_at = Timestamptz()
    deleted_at = Timestamptz(null=True, default=None)


class TopicSource(Table, tablename="topic_sources"):
    id = BigSerial(primary_key=True)
    workspace_id = BigInt()
    topic_id = BigInt()
    kind = Text()  # "feed" (RSS/Atom URL in `url`) | "arxiv" (arXiv API query in `query`)
    url = Text(default="")
    query = Text(default="")
    enabled = Boolean(default=True)
    interval_seconds = Integer(default=3600)  # how often it is scraped, >= 60
    next_run_at = Timestamptz()
    lease_until = Timestamptz(null=True, default=None)  # a worker holds it until then
    etag = Text(default="")  # conditional GET: the feed's last ETag
    last_modified = Text(default="")  # conditional GET: the feed's last Last-Modified
    failures = Integer(default=0)  # consecutive failed runs
    last_error = Text(default="")
    created_at = Timestamptz()


class TopicRun(Table, tablename="topic_runs"):
    id = BigSerial(primary_key=True)
    workspace_id = BigInt()
    source_id = BigInt()
    status = Text(default="running")  # running | ok | partial | not_modified | failed
    found = Integer(default=0)  # entries in the feed or API answer
    new = Integer(default=0)
    duplicates = Integer(default=0)
    failures = Integer(default=0)
    error = Text(default="")
    started_at = Timestamptz()
    finished_at = Timestamptz(null=True, default=None)
