"""Row-level security behind every workspace filter (docs/decisions/database.md).

`newsdesk_isolate_workspace(table)` enables and forces row-level security on a
table with a `workspace_id` column and gives it the one policy: a connection
bound to a workspace (`app.workspace_id`, set by `db.workspace_tx`) sees and
writes only that workspace's rows; an unbound connection is system work and
sees every row. A migration that adds a workspace table calls it once:

    SELECT newsdesk_isolate_workspace('my_table');

This migration applies it to every table that has a `workspace_id` column now.
tests/test_row_security.py fails for any such table without it.
"""

from app.core.db import sql_migration

ID = "2026-12-01T09:00:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "row-level security on workspace tables"

SQL = """
CREATE FUNCTION newsdesk_isolate_workspace(target regclass) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE format('ALTER TABLE %s ENABLE ROW LEVEL SECURITY', target);
  -- FORCE: the table's owner is held to the policy too (a one-role install).
  EXECUTE format('ALTER TABLE %s FORCE ROW LEVEL SECURITY', target);
  EXECUTE format('DROP POLICY IF EXISTS workspace_isolation ON %s', target);
  EXECUTE format(
    'CREATE POLICY workspace_isolation ON %s'
    ' USING (newsdesk_workspace_visible(workspace_id))'
    ' WITH CHECK (newsdesk_workspace_visible(workspace_id))',
    target);
END
$$;

-- True when the connection is unbound (system work) or bound to `workspace`.
-- Inlined by the planner, so `workspace_id = <bound id>` still uses indexes.
CREATE FUNCTION newsdesk_workspace_visible(workspace bigint) RETURNS boolean
LANGUAGE sql STABLE AS $$
  SELECT coalesce(current_setting('app.workspace_id', true), '') = ''
      OR workspace = nullif(current_setting('app.workspace_id', true), '')::bigint
$$;

SELECT newsdesk_isolate_workspace(c.oid)
FROM pg_class c
JOIN pg_namespace n ON n.oid = c.relnamespace
JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname = 'workspace_id' AND NOT a.attisdropped
WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p');
"""


forwards = sql_migration(ID, DESCRIPTION, SQL)
