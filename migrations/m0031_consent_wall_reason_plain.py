"""A consent-walled article's stored reason says only what happened.

m0028's runs stored "... Fetch again to read the article; it is analysed then." as the reason
of a skipped analysis, shown to viewers (who cannot fetch again) and in the API's `error`. The
reason is now the first sentence alone; the reader adds the hint for those who may fetch again
(app.analysis.services.CONSENT_WALL_REASON). Rows stored before keep the old text until this.
"""

from app.core.db import sql_migration

ID = "2026-12-02T09:05:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "analysis: a consent wall's stored reason without the Fetch again hint"

SQL = """
UPDATE analyses
SET error = 'Not analysed: the page showed a cookie consent wall, not the article.'
WHERE status = 'skipped'
  AND error = 'Not analysed: the page showed a cookie consent wall, not the article. '
              'Fetch again to read the article; it is analysed then.';
"""


forwards = sql_migration(ID, DESCRIPTION, SQL)
