"""Piccolo tables of the event log. The schema itself lives in migrations/."""

from piccolo.columns import JSONB, BigInt, BigSerial, Text, Timestamptz
from piccolo.table import Table


class Event(Table, tablename="events"):
    id = BigSerial(primary_key=True)
    workspace_id = BigInt()
    kind = Text()  # e.g. "signed_in", "member_added", "article_processed"
    actor_user_id = BigInt(null=True, default=None)  # None for the system
    subject = Text(default="")  # third-party text allowed: rendered through safe_content
    data = JSONB(default="{}")
    created_at = Timestamptz()
