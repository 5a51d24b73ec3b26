"""An analysis can be skipped: the article's text is a consent wall, not the article.

Such an article was analysed like any other, and its summary and keywords were the cookie
dialog's. `skipped` is a status of its own (app.analysis.services: the run notices the
wall and records why instead of analysing); the reconciler never wakes it, and fetching the
real page again queues it anew. The walled articles analysed before are made pending, so
a worker records them as skipped (one path decides; their wall keywords go then).
"""

from app.core.db import sql_migration

ID = "2026-12-02T05:40:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "analyses of consent walls are skipped, not analysed"

SQL = """
ALTER TABLE analyses DROP CONSTRAINT analyses_status_check;
ALTER TABLE analyses ADD CONSTRAINT analyses_status_check
  CHECK (status IN ('pending', 'running', 'completed', 'failed', 'skipped'));
UPDATE analyses an SET status = 'pending', attempts = 0, next_attempt_at = now(),
  lease_until = NULL, updated_at = now()
FROM articles a
WHERE a.id = an.article_id AND a.workspace_id = an.workspace_id
  AND a.warnings @> ARRAY['probable_consent_wall']
  AND an.status <> 'running';
"""


forwards = sql_migration(ID, DESCRIPTION, SQL)
