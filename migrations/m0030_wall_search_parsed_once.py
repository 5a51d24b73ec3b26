"""The wall's word index is read with the query parsed once per search, not once per call.

`newsdesk_feed_item_matches(q)` and `newsdesk_feed_item_matches_expected(q)` (m0025) take the
query's text, so each parses it in all 29 configurations again (~1-2 ms each): a looked-up
page parsed it three times - the estimate's, and the matches' as any language reads it and
in each one's own. These overloads take the parses the statement makes once
(`newsdesk_search_parses`' arrays, and their OR, `newsdesk_search_any_of`). The text forms stay
(system work and tests call them).
"""

from app.core.db import sql_migration

ID = "2026-12-02T09:00:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "wall search: the word index read with the query parsed once"

SQL = """
-- Every configuration's parse, OR-ed (m0005, m0021): what `newsdesk_search_any` makes from the
-- text, made from parses already made.
CREATE FUNCTION newsdesk_search_any_of(queries tsquery[]) RETURNS tsquery
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT string_agg(DISTINCT '(' || parsed::text || ')', ' | ')::tsquery
  FROM unnest(queries) AS parsed
  WHERE numnode(parsed) > 0
$$;

CREATE OR REPLACE FUNCTION newsdesk_search_any(q text) RETURNS tsquery
LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT newsdesk_search_any_of(p.queries) FROM newsdesk_search_parses(q) AS p
$$;

DO $migration$
BEGIN
  EXECUTE format($f$
    -- As newsdesk_feed_item_matches(q) (m0025), for a query parsed already: `query` as any
    -- language reads it, `configs`/`queries` each language's parse.
    CREATE FUNCTION newsdesk_feed_item_matches(query tsquery, configs regconfig[],
                                               queries tsquery[]) RETURNS SETOF bigint
    LANGUAGE sql STABLE SECURITY DEFINER SET search_path = %I, pg_temp ROWS 200 AS $body$
      SELECT s.item_id FROM feed_item_search s
      WHERE s.vector @@ query AND newsdesk_workspace_visible(s.workspace_id)
        AND s.vector @@ queries[array_position(configs, newsdesk_search_config(s.lang))]
    $body$;

    CREATE FUNCTION newsdesk_feed_item_matches_expected(query tsquery) RETURNS bigint
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = %I, pg_temp AS $body$
    DECLARE
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
  $f$, current_schema(), current_schema());
END
$migration$;
"""


forwards = sql_migration(ID, DESCRIPTION, SQL)
