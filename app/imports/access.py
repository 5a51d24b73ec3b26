"""Who may do what with import jobs: one rule for the pages, the API and MCP.

Following an import - the list of imports, a job's page and its live stream, the
saving page of one link, `GET /api/v1/imports`, `/imports/<id>` and `/items`, MCP's
`get_import_job` - is reading the library: `draft.view`, every member. What a job
holds (the links, their states, the titles saved) is what the library and the
activity log already show a viewer.

Starting an import and steering one - the import form and its live counter, saving a
link, Pause, Resume, Cancel, Retry failed, Delete, "Fetch again" - changes the library:
`articles.import`, editors and up. Refused, it says so in these words (a 403, or an
MCP tool error).
"""

from __future__ import annotations

from app.accounts.roles import Permission
from app.core.i18n import N_

FOLLOW = Permission.DRAFT_VIEW
MANAGE = Permission.ARTICLES_IMPORT
# Translated when refused (allows(..., refusal=...), mcp._member).
NOT_ALLOWED = N_("Your role in this workspace lets you follow imports, not start or change them.")
