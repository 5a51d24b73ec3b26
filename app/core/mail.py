"""Sending mail through the operator's SMTP server (SMTP_* settings).

The standard library's smtplib, run in a thread: Newsdesk sends a handful of
mails (password resets), which needs no extra dependency. The SMTP server is
the operator's own relay, not an address from third-party content, so this
does not go through app/egress (which guards HTTP fetches of the web).
"""

from __future__ import annotations

import asyncio
import smtplib
import ssl
from email.message import EmailMessage
from email.utils import formatdate, make_msgid, parseaddr

from app.core.config import Settings, active

TIMEOUT_SECONDS = 20


class MailError(Exception):
    """The mail could not be handed to the SMTP server."""


def message(to: str, subject: str, text: str, *, sender: str) -> EmailMessage:
    mail = EmailMessage()
    mail["From"] = sender
    mail["To"] = to
    mail["Subject"] = subject
    mail["Date"] = formatdate(localtime=False)
    domain = parseaddr(sender)[1].rpartition("@")[2] or None
    mail["Message-ID"] = make_msgid(domain=domain)
    mail.set_content(text)
    return mail


async def send_mail(to: str, subject: str, text: str) -> None:
    """Hand one plain-text mail to SMTP_HOST; MailError when that fails."""
    settings = active()
    if not settings.mail_configured:
        raise MailError("no SMTP_HOST is set")
    mail = message(to, subject, text, sender=settings.smtp_from)
    try:
        await asyncio.to_thread(_deliver, settings, mail)
    except (OSError, smtplib.SMTPException) as error:
        raise MailError(f"{type(error).__name__}: {error}") from None


def _deliver(settings: Settings, mail: EmailMessage) -> None:
    context = ssl.create_default_context()
    smtp: smtplib.SMTP
    if settings.smtp_tls == "tls":
        smtp = smtplib.SMTP_SSL(
            settings.smtp_host, settings.smtp_port, timeout=TIMEOUT_SECONDS, context=context
        )
    else:
        smtp = smtplib.SMTP(settings.smtp_host, settings.smtp_port, timeout=TIMEOUT_SECONDS)
    with smtp:
        if settings.smtp_tls == "starttls":
            smtp.starttls(context=context)
        if settings.smtp_user:
            smtp.login(settings.smtp_user, settings.smtp_password.get_secret_value())
        smtp.send_message(mail)
