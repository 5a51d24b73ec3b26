"""Piccolo tables of the library. The schema itself lives in migrations/."""

from piccolo.columns import JSONB, Array, BigInt, BigSerial, Boolean, Integer, Text, Timestamptz
from piccolo.table import Table


class Article(Table, tablename="articles"):
    id = BigSerial(primary_key=True)
    workspace_id = BigInt()
    url = Text()  # the normalised URL (app.articles.urls.normalize_url)
    url_hash = Text()  # sha256 hex of `url`; unique per workspace
    source = Text()  # what brought it: "manual", "import", "feed", "arxiv", "api"
    title = Text(default="")  # third-party text
    byline = Text(default="")  # third-party text
    site_name = Text(default="")  # third-party text
    language = Text(default="")  # ISO 639-1 when known
    published_at = Timestamptz(null=True, default=None)
    topic_id = BigInt(null=True, default=None)
    content = JSONB()  # the body as an app.safe_content Document (JSON)
    text = Text(default="")  # plain text of `content`, for search and summaries
    word_count = Integer(default=0)
    lead_image = Text(default="")  # remote URL; shown only through the media proxy
    metadata = JSONB(default="{}")  # source metadata: feed entry, content type, hints
    warnings = Array(base_column=Text())  # e.g. "probable_consent_wall", "probable_paywall"
    created_at = Timestamptz()
    updated_at = Timestamptz()
    deleted_at = Timestamptz(null=True, default=None)  # soft delete; restore clears it


class ArxivMetadata(Table, tablename="arxiv_metadata"):
    id = BigSerial(primary_key=True)
    workspace_id = BigInt()
    article_id = BigInt()
    arxiv_id = Text(default="")  # e.g. "2401.01234v2"
    authors = JSONB(default="[]")  # ["Ada Lovelace", ...]
    pdf_available = Boolean(default=False)
    pdf_url = Text(default="")
    sections = JSONB(default="[]")  # ordered [{"heading": str, "text": str}, ...]
    created_at = Timestamptz()
    updated_at = Timestamptz()


class Analysis(Table, tablename="analyses"):
    id = BigSerial(primary_key=True)
    workspace_id = BigInt()
    article_id = BigInt()  # one analysis row per article
    status = Text(default="pending")  # pending | running | completed | failed
    summary = Text(default="")
    keywords = JSONB(default="[]")  # ["keyword", ...], most relevant first
    language = Text(default="")
    reading_minutes = Integer(default=0)
    analyser = Text(default="")  # which analyser produced it, e.g. "local-v1"
    error = Text(default="")  # the last failure's reason
    attempts = Integer(default=0)
    next_attempt_at = Timestamptz()  # when a worker may (re)try it
    lease_until = Timestamptz(null=True, default=None)  # a worker holds it until then
    created_at = Timestamptz()
    updated_at = Timestamptz()
    completed_at = Timestamptz(null=True, default=None)
