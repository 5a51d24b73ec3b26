"""What each kind of event says, as UI text (translated at render time)."""

from __future__ import annotations

from app.core.i18n import gettext


def N_(message: str) -> str:
    """Mark a message for extraction; translated where it is shown."""
    return message


EVENT_VERBS: dict[str, str] = {
    "workspace_created": N_("created the workspace"),
    "signed_in": N_("signed in"),
    "member_added": N_("added a member"),
    "member_removed": N_("removed a member"),
    "member_role_changed": N_("changed a member's role"),
    "invitation_created": N_("created an invitation"),
    "invitation_revoked": N_("revoked an invitation"),
    "api_token_created": N_("created an API token"),
    "api_token_revoked": N_("revoked an API token"),
    "article_processed": N_("queued an article for analysis"),
    "article_deleted": N_("moved an article to the trash"),
    "article_restored": N_("restored an article from the trash"),
    "topic_created": N_("created the topic"),
    "topic_renamed": N_("renamed a topic to"),
    "topic_deleted": N_("deleted the topic"),
    "topic_source_added": N_("added a source to the topic"),
    "topic_source_removed": N_("removed a source from the topic"),
}


def verb(kind: str) -> str:
    return gettext(EVENT_VERBS.get(kind, kind.replace("_", " ")))
