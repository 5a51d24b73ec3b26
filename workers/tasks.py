"""Thin arq task functions: each takes ids, calls one service, is idempotent."""

from __future__ import annotations

from typing import Any

from app.accounts.housekeeping import forget_expired


async def housekeeping(ctx: dict[str, Any]) -> dict[str, int]:
    sessions, invitations = await forget_expired()
    return {"sessions": sessions, "invitations": invitations}
