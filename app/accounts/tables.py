"""Piccolo tables of accounts. The schema itself lives in migrations/."""

from piccolo.columns import (
    BigInt,
    BigSerial,
    Boolean,
    Text,
    Timestamptz,
)
from piccolo.table import Table


class User(Table, tablename="users"):
    id = BigSerial(primary_key=True)
    email = Text()  # unique case-insensitively
    display_name = Text()
    password_hash = Text()  # argon2id, from argon2-cffi
    locale = Text(default="en")
    time_zone = Text(default="UTC")  # an IANA name, checked with zoneinfo
    is_active = Boolean(default=True)
    created_at = Timestamptz()


class Workspace(Table, tablename="workspaces"):
    id = BigSerial(primary_key=True)
    name = Text()
    created_at = Timestamptz()


class Membership(Table, tablename="memberships"):
    id = BigSerial(primary_key=True)
    workspace_id = BigInt()
    user_id = BigInt()
    role = Text()  # owner | admin | editor | viewer (app.accounts.roles)
    created_at = Timestamptz()


class Session(Table, tablename="sessions"):
    id = BigSerial(primary_key=True)
    token_hash = Text()  # sha256 hex of the cookie value; the value itself is never stored
    user_id = BigInt()
    workspace_id = BigInt(null=True)  # the workspace this session works in
    created_at = Timestamptz()
    last_seen_at = Timestamptz()
    expires_at = Timestamptz()
    user_agent = Text(default="")


class ApiToken(Table, tablename="api_tokens"):
    id = BigSerial(primary_key=True)
    workspace_id = BigInt()
    user_id = BigInt()
    name = Text()
    token_hash = Text()  # sha256 hex; the token is shown once
    prefix = Text()  # first characters, to recognise a token in the list
    created_at = Timestamptz()
    last_used_at = Timestamptz(null=True, default=None)
    revoked_at = Timestamptz(null=True, default=None)


class Invitation(Table, tablename="invitations"):
    id = BigSerial(primary_key=True)
    workspace_id = BigInt()
    token_hash = Text()
    role = Text()
    email = Text(default="")  # optional hint; any signed-in person with the link may accept
    created_by = BigInt()
    created_at = Timestamptz()
    expires_at = Timestamptz()
    accepted_at = Timestamptz(null=True, default=None)
    accepted_by = BigInt(null=True, default=None)


class PasswordReset(Table, tablename="password_resets"):
    id = BigSerial(primary_key=True)
    user_id = BigInt()
    token_hash = Text()  # sha256 hex of the link's token; the link is shown or mailed once
    created_by = BigInt(null=True, default=None)  # the admin who issued it; None: the person
    created_at = Timestamptz()
    expires_at = Timestamptz()
    used_at = Timestamptz(null=True, default=None)
