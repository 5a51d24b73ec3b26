"""The wall's search reads a word index again, under row security: a rare word is found fast.

The app's role is held by forced row security, and `@@` is not leakproof: the GIN index
`feed_items_search` was never an index condition for it, so the search walked the posts newest
first until its page was full - for a word in fewer posts than a page, the whole workspace.
Each post's vector (its text as its own language reads it, m0017) is now also in
`feed_item_search`, a table without row security that the app's role may not read
(`db.PRIVATE_TABLES`), with its GIN index, and with the post's language so a candidate is
matched in it without parsing its text again. The app reads it only through
`newsdesk_feed_item_matches(q)`, a SECURITY DEFINER function answering the ids of the bound
workspace's posts that match (of all, unbound), filtered by the binding itself as
`newsdesk_article_matches` is (m0024); the caller joins them back to `feed_items`.
`newsdesk_feed_item_matches_expected(q)` gives the planner's estimate of their number: a
common word is walked uncounted (counting reads the index as a bitmap of every match first).

Triggers keep it: the posts an INSERT adds, at once (a statement's transition table: a poll
stores up to 40; ~40 % cheaper than a trigger per post), and an UPDATE only of a post's text, language or workspace, only when one
changed - a re-seen post's poll write (`fetched_at`, `metrics`) stays a HOT update (m0020).
`feed_items_search` goes: nothing reads it, and every new post paid for it.
"""

from app.core.db import sql_migration

ID = "2026-12-02T04:30:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "wall search: the posts' word index, readable under row security"

# A post's vector: its text as its own language reads it (m0017), `row.` the post.
_VECTOR = "to_tsvector(newsdesk_search_config({row}lang), {row}plain_text)"

# The functions run as their owner: their search_path is pinned to the schema the tables are
# in, with pg_temp last (a caller's temporary table must not stand in for ours).
SQL = f"""
CREATE TABLE feed_item_search (
  item_id bigint PRIMARY KEY REFERENCES feed_items (id) ON DELETE CASCADE,
  workspace_id bigint NOT NULL,
  lang text NOT NULL,
  vector tsvector NOT NULL
);
REVOKE ALL ON feed_item_search FROM PUBLIC;

INSERT INTO feed_item_search (item_id, workspace_id, lang, vector)
SELECT id, workspace_id, lang, {_VECTOR.format(row="")} FROM feed_items;

CREATE INDEX feed_item_search_vector ON feed_item_search USING gin (vector);
DROP INDEX feed_items_search;

DO $migration$
BEGIN
  EXECUTE format($f$
    -- Ids of the bound workspace's posts that match `q` as their own language reads it
    -- (newsdesk_workspace_visible: the policy's test). Runs as the owner: the index is read,
    -- with the query as any language reads it, and each candidate matched in its own.
    CREATE FUNCTION newsdesk_feed_item_matches(q text) RETURNS SETOF bigint
    LANGUAGE sql STABLE SECURITY DEFINER SET search_path = %I, pg_temp ROWS 200 AS $body$
      SELECT s.item_id FROM feed_item_search s, newsdesk_search_parses(q) p
      WHERE s.vector @@ newsdesk_search_any(q) AND newsdesk_workspace_visible(s.workspace_id)
        AND s.vector @@ p.queries[array_position(p.configs, newsdesk_search_config(s.lang))]
    $body$;

    -- How many of the bound workspace's posts the planner expects to match `q` (as any
    -- language reads it): its statistics of the index's words, no row read. VOLATILE: it
    -- runs EXPLAIN.
    CREATE FUNCTION newsdesk_feed_item_matches_expected(q text) RETURNS bigint
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = %I, pg_temp AS $body$
    DECLARE
      query tsquery := newsdesk_search_any(q);
      plan json;
    BEGIN
      IF query IS NULL THEN
        RETURN 0;
      END IF;
      EXECUTE 'EXPLAIN (FORMAT JSON) SELECT FROM feed_item_search'
        ' WHERE vector @@ $1 AND newsdesk_workspace_visible(workspace_id)'
        INTO plan USING query;
      RETURN (plan -> 0 -> 'Plan' ->> 'Plan Rows')::bigint;
    END
    $body$;

    CREATE FUNCTION newsdesk_feed_item_search_add() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = %I, pg_temp AS $body$
    BEGIN
      INSERT INTO feed_item_search (item_id, workspace_id, lang, vector)
      SELECT id, workspace_id, lang, {_VECTOR.format(row="")} FROM added;
      RETURN NULL;
    END
    $body$;

    CREATE FUNCTION newsdesk_feed_item_search_change() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = %I, pg_temp AS $body$
    BEGIN
      UPDATE feed_item_search
      SET workspace_id = NEW.workspace_id, lang = NEW.lang, vector = {_VECTOR.format(row="NEW.")}
      WHERE item_id = NEW.id;
      RETURN NULL;
    END
    $body$;
  $f$, current_schema(), current_schema(), current_schema(), current_schema());
END
$migration$;

-- The statement's new posts at once: one INSERT for a poll's page, not one per post.
CREATE TRIGGER feed_item_search_add AFTER INSERT ON feed_items
REFERENCING NEW TABLE AS added
FOR EACH STATEMENT EXECUTE FUNCTION newsdesk_feed_item_search_add();
-- A poll's upsert sets `lang` on every re-seen post (kept unless it was ''): only a real
-- change of what the vector is made of writes it.
CREATE TRIGGER feed_item_search_change
AFTER UPDATE OF workspace_id, lang, plain_text ON feed_items
FOR EACH ROW
WHEN (OLD.plain_text IS DISTINCT FROM NEW.plain_text OR OLD.lang IS DISTINCT FROM NEW.lang
      OR OLD.workspace_id <> NEW.workspace_id)
EXECUTE FUNCTION newsdesk_feed_item_search_change();
"""


forwards = sql_migration(ID, DESCRIPTION, SQL)
