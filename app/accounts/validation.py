"""Checking what people type into accounts' forms. Pure: no I/O.

Emails are checked by email-validator (syntax and domain rules, no DNS
lookups: an offline or intranet installation must still work) and capped at
254 characters, the longest address SMTP can carry. Over-long names are
refused with a message, never cut silently.
"""

from __future__ import annotations

from email_validator import SPECIAL_USE_DOMAIN_NAMES, EmailNotValidError, validate_email

from app.accounts.types import AccountError
from app.core.i18n import _, format_number
from app.safe_content import one_line

MAX_EMAIL = 254  # RFC 5321's path limit, less the angle brackets
MAX_DISPLAY_NAME = 120
MAX_WORKSPACE_NAME = 120
MAX_TOKEN_NAME = 80


def checked_email(value: str, *, field: str = "email") -> str:
    """The address in its normal form (domain lower-cased, IDNA); AccountError if unusable."""
    value = value.strip()
    if not value:
        raise AccountError(_("Enter an email address like name@example.org."), field=field)
    if len(value) > MAX_EMAIL:
        raise AccountError(
            _("An email address has at most %(n)s characters.") % {"n": format_number(MAX_EMAIL)},
            field=field,
        )
    try:
        return validate_email(value, check_deliverability=False).normalized
    except EmailNotValidError:
        raise AccountError(
            _("This is not a usable email address: %(reason)s") % {"reason": _reason(value)},
            field=field,
        ) from None


def _reason(value: str) -> str:
    """Why an address was refused, in the reader's language: email-validator says it in
    English only, which read "Das ist keine ...: An email address must have an @-sign."."""
    local, at, domain = value.rpartition("@")
    if not at:
        return _("it needs an @, like name@example.org.")
    if not local:
        return _("a name goes before the @, like name@example.org.")
    if not domain:
        return _("a domain goes after the @, like name@example.org.")
    if domain.lower().rstrip(".").rsplit(".", 1)[-1] in SPECIAL_USE_DOMAIN_NAMES:
        return _("%(domain)s is a name for tests and local networks; no mail reaches it.") % {
            "domain": domain
        }
    if "." not in domain:
        return _("the domain after the @ needs a period, like example.org.")
    return _("check it for spaces, a second @ or characters such as , ; _ that addresses lack.")


def checked_name(value: str, *, field: str, limit: int, missing: str) -> str:
    """A name without surrounding or repeated spaces; AccountError if empty or too long."""
    value = one_line(value)
    if not value:
        raise AccountError(missing, field=field)
    if len(value) > limit:
        raise AccountError(
            _("Keep it to %(n)s characters (this one has %(len)s).")
            % {"n": format_number(limit), "len": format_number(len(value))},
            field=field,
        )
    return value
