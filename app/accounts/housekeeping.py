"""Forgetting what has expired: sessions and invitations past their date."""

from __future__ import annotations

from app.core import db


async def forget_expired() -> tuple[int, int]:
    """Delete expired sessions and unaccepted expired invitations; returns the counts."""
    sessions = await db.fetch("DELETE FROM sessions WHERE expires_at < now() RETURNING id")
    invitations = await db.fetch(
        "DELETE FROM invitations WHERE accepted_at IS NULL AND expires_at < now() - interval '30 days' RETURNING id"
    )
    return len(sessions), len(invitations)
