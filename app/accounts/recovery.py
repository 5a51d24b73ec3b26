"""Getting back into an account: one-time reset links and new passwords.

A reset link holds 256 random bits; the table keeps only their SHA-256. A link
works once, until it expires; setting a password through it ends every session
of the person (and so their open live pages) and every other link they hold.
Links come from the "Forgot password?" mail, from an admin on Members, or from
the operator's `python -m app reset-password`.
"""

from __future__ import annotations

import logging
import secrets
from datetime import timedelta

from app.accounts.credentials import hash_password, new_token, token_hash
from app.accounts.roles import Role, may_manage
from app.accounts.services import check_new_password
from app.accounts.throttle import SignInThrottle
from app.accounts.types import AccountError, ResetLinkShown
from app.core import db, i18n
from app.core.config import active
from app.core.i18n import _, ngettext
from app.core.mail import MailError, send_mail
from app.events.services import record
from app.live.notices import access_changed

log = logging.getLogger(__name__)

MAILED_LINK_VALID = timedelta(hours=1)  # a mailbox is where an attacker looks first
HANDED_LINK_VALID = timedelta(hours=24)  # passed on by an admin or the operator


def reset_link(token: str) -> str:
    return f"{active().base_url}/reset/{token}"


async def issue_reset(user_id: int, *, valid: timedelta, created_by: int | None = None) -> str:
    """A new one-time reset token for `user_id` (returned once, stored hashed)."""
    token = new_token()
    await db.fetch(
        """
        INSERT INTO password_resets (user_id, token_hash, created_by, expires_at)
        VALUES ($1, $2, $3, now() + $4::interval)
        """,
        user_id,
        token_hash(token),
        created_by,
        valid,
    )
    return token


async def email_for_reset(token: str) -> str | None:
    """The address of the account a usable reset link is for, else None."""
    value = await db.fetchval(
        """
        SELECT u.email FROM password_resets r JOIN users u ON u.id = r.user_id AND u.is_active
        WHERE r.token_hash = $1 AND r.used_at IS NULL AND r.expires_at > now()
        """,
        token_hash(token),
    )
    return str(value) if value is not None else None


async def reset_password(token: str, password: str, *, ip: str) -> int:
    """Set the password a reset link is for; the link is spent. Returns the user id."""
    check_new_password(password, "password")  # before the link is spent: it can be retried
    with db.system():  # the person's sessions in every workspace
        async with db.transaction() as tx:
            row = await tx.fetchrow(
                """
                UPDATE password_resets r SET used_at = now()
                FROM users u
                WHERE r.token_hash = $1 AND r.used_at IS NULL AND r.expires_at > now()
                  AND u.id = r.user_id AND u.is_active
                RETURNING u.id, u.email
                """,
                token_hash(token),
            )
            if row is None:
                raise AccountError(
                    _("This reset link has expired or was used already. Ask for a new one."),
                    status=404,
                )
            await _replace_password(tx, row["id"], password)
    await _after_new_password(row["id"], row["email"], ip=ip)
    return int(row["id"])


async def set_new_password(email: str) -> str:
    """The operator's way in: a random new password for `email`, returned once."""
    password = secrets.token_urlsafe(12)
    with db.system():
        async with db.transaction() as tx:
            row = await tx.fetchrow(
                "SELECT id, email FROM users WHERE lower(email) = lower($1)", email.strip()
            )
            if row is None:
                raise AccountError(
                    _("No account has the email %(email)s.") % {"email": email.strip()}
                )
            await _replace_password(tx, row["id"], password)
    await _after_new_password(row["id"], row["email"], ip="")
    return password


async def user_id_by_email(email: str) -> int | None:
    value = await db.fetchval(
        "SELECT id FROM users WHERE lower(email) = lower($1) AND is_active", email.strip()
    )
    return int(value) if value is not None else None


async def _replace_password(tx: db.Tx, user_id: int, password: str) -> None:
    await tx.execute(
        "UPDATE users SET password_hash = $2 WHERE id = $1", user_id, hash_password(password)
    )
    # Every way in that the old password, a stolen cookie or an older link gave ends here.
    await tx.execute("DELETE FROM sessions WHERE user_id = $1", user_id)
    await tx.execute("DELETE FROM password_resets WHERE user_id = $1 AND used_at IS NULL", user_id)


async def _after_new_password(user_id: int, email: str, *, ip: str) -> None:
    await access_changed(user_id)  # their open pages are cut at once
    # Whoever guessed meanwhile no longer keeps the person out of their new password.
    await SignInThrottle(email, ip).forget_account()


# "Forgot password?" -------------------------------------------------------------

MAILS_PER_HOUR = 3  # per account: enough to retry, too few to flood a mailbox


async def mail_reset_link(email: str) -> None:
    """Mail a reset link when `email` is an account's; otherwise do nothing.

    Run after the answer is sent, which says the same either way: neither its
    words nor its timing tell whether the address has an account.
    """
    row = await db.fetchrow(
        """
        SELECT u.id, u.email, u.locale,
          (SELECT count(*) FROM password_resets r
           WHERE r.user_id = u.id AND r.created_by IS NULL
             AND r.created_at > now() - interval '1 hour') AS recent
        FROM users u WHERE lower(u.email) = lower($1) AND u.is_active
        """,
        email.strip(),
    )
    if row is None:
        return
    if row["recent"] >= MAILS_PER_HOUR:
        log.info("reset mail for user %s not sent: %d already this hour", row["id"], MAILS_PER_HOUR)
        return
    token = await issue_reset(row["id"], valid=MAILED_LINK_VALID)
    with i18n.speaking(row["locale"]):  # the recipient's language, not the requester's
        subject, text = _reset_mail(reset_link(token))
    try:
        await send_mail(row["email"], subject, text)
    except MailError as error:
        log.error("reset mail for user %s not sent: %s", row["id"], error)


def _reset_mail(link: str) -> tuple[str, str]:
    minutes = int(MAILED_LINK_VALID.total_seconds() // 60)
    text = ngettext(
        "Someone asked to reset the password of your Newsdesk account at %(site)s.\n\n"
        "To choose a new password, open this link within %(num)s minute. It works once:\n\n"
        "%(link)s\n\n"
        "If it was not you, ignore this mail: your password stays as it is.",
        "Someone asked to reset the password of your Newsdesk account at %(site)s.\n\n"
        "To choose a new password, open this link within %(num)s minutes. It works once:\n\n"
        "%(link)s\n\n"
        "If it was not you, ignore this mail: your password stays as it is.",
        minutes,
    ) % {"site": active().base_url, "num": i18n.format_number(minutes), "link": link}
    return _("Reset your Newsdesk password"), text


# Links an admin hands out ------------------------------------------------------


async def issue_member_reset(
    workspace_id: int, user_id: int, *, actor_user_id: int, actor_role: Role
) -> ResetLinkShown:
    """A reset link for a member, issued from Members; shown once to the admin.

    An admin may not take over an owner, and nobody may take over an account that
    also belongs to another workspace (where the issuer has no say): that person
    uses "Forgot password?" or asks the operator.
    """
    with db.system():  # their memberships everywhere: a bound request sees only this one
        rows = await db.fetch(
            """
            SELECT m.workspace_id, m.role, u.display_name
            FROM memberships m JOIN users u ON u.id = m.user_id AND u.is_active
            WHERE m.user_id = $1
            """,
            user_id,
        )
    member = next((r for r in rows if r["workspace_id"] == workspace_id), None)
    if member is None:
        raise AccountError(_("This person is not a member of the workspace."), status=404)
    if user_id == actor_user_id:
        raise AccountError(_("Change your own password under Settings."))
    if not may_manage(actor_role, Role(member["role"])):
        raise AccountError(_("Only an owner can reset an owner's password."), status=403)
    if len(rows) > 1:
        raise AccountError(
            _(
                "This person belongs to other workspaces too, so only they (Forgot password? "
                "on the sign-in page) or the server's operator can reset their password."
            ),
            status=403,
        )
    async with db.workspace_tx(workspace_id) as tx:
        await record(
            tx,
            "password_reset_issued",
            actor_user_id=actor_user_id,
            subject=member["display_name"],
            user_id=user_id,
        )
        # password_resets is instance-wide: the workspace binding does not hide it.
        token = await issue_reset(user_id, valid=HANDED_LINK_VALID, created_by=actor_user_id)
    return ResetLinkShown(name=member["display_name"], link=reset_link(token))
