"""Forgetting what has expired: sessions, invitations and reset links past their date."""

from __future__ import annotations

from app.core import db


async def forget_expired() -> dict[str, int]:
    """Delete expired sessions, old unaccepted invitations and old reset links; the counts."""
    sessions = await db.fetch("DELETE FROM sessions WHERE expires_at < now() RETURNING id")
    invitations = await db.fetch(
        "DELETE FROM invitations WHERE accepted_at IS NULL AND expires_at < now() - interval '30 days' RETURNING id"
    )
    resets = await db.fetch(
        "DELETE FROM password_resets WHERE expires_at < now() - interval '1 day' RETURNING id"
    )
    return {"sessions": len(sessions), "invitations": len(invitations), "resets": len(resets)}
