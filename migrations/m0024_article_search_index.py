"""The library's search reads the word index again, under row security.

The app's role is held by forced row security, and `@@` is not leakproof: PostgreSQL never
made it an index condition, so every search read every article and its stored vector. The
vectors are now also in `article_search`, a table without row security that the app's role
may not read (`db.PRIVATE_TABLES`: no grants), kept by triggers on `articles` (written on
insert; on update only when the vector changes), with its GIN index. The app reads it only
through `newsdesk_article_matches(query)`, a SECURITY DEFINER function that answers the ids
of the matching articles of the bound workspace (of all, unbound: system work, as the
policy). It filters by the binding itself, with the policy's own test, rather than trusting
`articles`' policy inside it: a function runs as its owner, and an owner that is a
superuser or has BYPASSRLS (the test suite's, a one-role install's) is held by no policy,
forced or not. The caller joins the ids back to `articles`, under its policy as ever.

`articles_search`, the GIN index on `articles.search`, goes: under row security nothing the
app runs could read it, and each insert paid for it. The stored column stays: ranking and
the per-language match read it.
"""

from app.core.db import sql_migration

ID = "2026-12-02T03:30:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "search: the library's word index, readable under row security"

# The functions run as their owner: their search_path is pinned to the schema the tables are
# in, with pg_temp last (a caller's temporary table must not stand in for ours).
SQL = """
CREATE TABLE article_search (
  article_id bigint PRIMARY KEY REFERENCES articles (id) ON DELETE CASCADE,
  workspace_id bigint NOT NULL,
  vector tsvector NOT NULL
);
REVOKE ALL ON article_search FROM PUBLIC;

INSERT INTO article_search (article_id, workspace_id, vector)
SELECT id, workspace_id, search FROM articles;

CREATE INDEX article_search_vector ON article_search USING gin (vector);
DROP INDEX articles_search;

DO $migration$
BEGIN
  EXECUTE format($f$
    -- Ids of the articles whose vector matches `query`, of the bound workspace only
    -- (newsdesk_workspace_visible: the policy's test). Runs as the owner: the index is read.
    CREATE FUNCTION newsdesk_article_matches(query tsquery) RETURNS SETOF bigint
    LANGUAGE sql STABLE SECURITY DEFINER SET search_path = %I, pg_temp ROWS 200 AS $body$
      SELECT article_id FROM article_search
      WHERE vector @@ query AND newsdesk_workspace_visible(workspace_id)
    $body$;

    CREATE FUNCTION newsdesk_article_search_write() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = %I, pg_temp AS $body$
    BEGIN
      IF TG_OP = 'INSERT' THEN
        INSERT INTO article_search (article_id, workspace_id, vector)
        VALUES (NEW.id, NEW.workspace_id, NEW.search);
      ELSE
        UPDATE article_search SET workspace_id = NEW.workspace_id, vector = NEW.search
        WHERE article_id = NEW.id;
      END IF;
      RETURN NULL;
    END
    $body$;
  $f$, current_schema(), current_schema());
END
$migration$;

CREATE TRIGGER article_search_insert AFTER INSERT ON articles
FOR EACH ROW EXECUTE FUNCTION newsdesk_article_search_write();
-- Only an update of what the vector is made of (m0005), and only when the vector changed:
-- the analysis's and the trash's updates write no second row.
CREATE TRIGGER article_search_update
AFTER UPDATE OF workspace_id, language, title, byline, site_name, text ON articles
FOR EACH ROW
WHEN (OLD.search IS DISTINCT FROM NEW.search OR OLD.workspace_id <> NEW.workspace_id)
EXECUTE FUNCTION newsdesk_article_search_write();
"""


forwards = sql_migration(ID, DESCRIPTION, SQL)
