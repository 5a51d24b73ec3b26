"""How the import pages name states and say how long is left (UI text)."""

from __future__ import annotations

from typing import Any

from app.articles.labels import warning_label
from app.core.i18n import format_datetime, format_number, gettext, ngettext
from app.imports.types import DONE_WITH_ERRORS, FAILED, JobView


def N_(message: str) -> str:
    """Mark a message for extraction; translated where it is shown."""
    return message


# By JobView.outcome: a status, or how a done job went when addresses failed.
JOB_STATUSES = {
    "queued": N_("Queued"),
    "running": N_("Running"),
    "paused": N_("Paused"),
    "done": N_("Done"),
    DONE_WITH_ERRORS: N_("Done with errors"),
    FAILED: N_("Failed"),
    "cancelled": N_("Cancelled"),
}
ITEM_STATES = {
    "pending": N_("Waiting"),
    "extracting": N_("Fetching"),
    "saved": N_("Saved"),
    "duplicate": N_("Already in the library"),
    "consent-wall": N_("Consent wall"),
    "error": N_("Failed"),
    "cancelled": N_("Cancelled"),
}


def _count(singular: str, plural: str, num: int, **values: str) -> str:
    """A count as its reader writes numbers: "1.234 Duplikate"."""
    return ngettext(singular, plural, num) % {"num": format_number(num), **values}


def job_status_label(value: str) -> str:
    return gettext(JOB_STATUSES.get(value, value))


def item_state_label(value: str) -> str:
    return gettext(ITEM_STATES.get(value, value))


def time_left(job: JobView, time_zone: str = "UTC") -> str:
    """An honest estimate: none before there is a pace to go by, rounded as people say it;
    while every open item waits for its next attempt, that wait, at the reader's clock."""
    if job.status.value == "paused":
        return gettext("Paused: nothing new is fetched until you resume.")
    if not job.active:
        return ""
    if job.retry_at is not None:
        return _count(
            "%(num)s address waits to be tried again (next at %(time)s)",
            "%(num)s addresses wait to be tried again (next at %(time)s)",
            job.counters.left,
            time=format_datetime(job.retry_at, time_zone, "time"),
        )
    if job.eta_seconds is None:
        return gettext("Estimating the time left once the first pages are in…")
    seconds = job.eta_seconds
    if seconds < 60:
        return gettext("Less than a minute left")
    minutes = round(seconds / 60)
    if minutes < 90:
        return _count("About %(num)s minute left", "About %(num)s minutes left", minutes)
    hours = round(seconds / 3600)
    return _count("About %(num)s hour left", "About %(num)s hours left", hours)


def summary(job: JobView) -> str:
    """ "37 / 120 — 3 duplicates, 1 warning, 2 errors" """
    c = job.counters
    parts = []
    if c.duplicates:
        parts.append(_count("%(num)s duplicate", "%(num)s duplicates", c.duplicates))
    if c.warnings:
        parts.append(_count("%(num)s warning", "%(num)s warnings", c.warnings))
    if c.errors:
        parts.append(_count("%(num)s error", "%(num)s errors", c.errors))
    if c.cancelled:
        parts.append(_count("%(num)s cancelled", "%(num)s cancelled", c.cancelled))
    head = f"{format_number(c.finished)} / {format_number(c.total)}"
    return head + (" — " + ", ".join(parts) if parts else "")


TEMPLATE_HELPERS: dict[str, Any] = {
    "job_status_label": job_status_label,
    "item_state_label": item_state_label,
    "warning_label": warning_label,
    "time_left": time_left,
    "job_summary": summary,
}
