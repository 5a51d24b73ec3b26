"""What happens to an import item after a try: pure decisions, no I/O.

- A stored article is `saved`, or `consent-wall` when the page was a
  consent wall (stored with the warning, so a person can save it again from
  a browser); a paywalled page is `saved` with its warning.
- The library had it already: `duplicate`.
- Transient failures (timeouts, unreachable, broken answers, 408/429/5xx,
  the store briefly unavailable) go back to `pending` with a backoff that
  honours Retry-After; the third failed attempt makes the item `error`.
- Permanent failures (404, 410, 401/403, blocked addresses, not a web
  page, no readable text) make it `error` at once.
- Our own per-host budget being spent is not a failure: the item waits for
  the host (it says which) and the attempt does not count.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from app.articles.extraction import ExtractionError, Failure
from app.articles.types import Outcome, OutcomeKind, Warning
from app.egress import RateLimited
from app.imports.types import ItemState

MAX_ATTEMPTS = 3
# Backoff after the n-th failed attempt: BASE x 6^(n-1) (10 s, then 60 s).
# Module-level so tests can shorten it.
BASE_DELAY_SECONDS = 10.0
MAX_DELAY_SECONDS = 3600.0
# How long an item waits when its host's budget is spent and nobody said how long.
BUDGET_WAIT_SECONDS = 2.0


def backoff_seconds(attempts: int, retry_after: float | None = None) -> float:
    delay = BASE_DELAY_SECONDS * 6 ** max(attempts - 1, 0)
    if retry_after is not None:
        delay = max(delay, retry_after)
    return min(delay, MAX_DELAY_SECONDS)


@dataclass(frozen=True)
class Stored:
    """The item's terminal state after `process_scraped_article` stored (or found) it."""

    state: ItemState
    warning: str = ""


def stored(outcome: Outcome, warnings: tuple[Warning, ...]) -> Stored:
    """Map a non-failed outcome to the item's state."""
    if outcome.kind in (OutcomeKind.DUPLICATE, OutcomeKind.DUPLICATE_AWAITING_ANALYSIS):
        return Stored(ItemState.DUPLICATE)
    if Warning.CONSENT_WALL in warnings:
        return Stored(ItemState.CONSENT_WALL, Warning.CONSENT_WALL.value)
    return Stored(ItemState.SAVED, warnings[0].value if warnings else "")


@dataclass(frozen=True)
class Retry:
    """Try again after `delay` seconds, unless attempts are used up."""

    reason: str
    delay: float
    counts: bool = True  # False: a budget wait, not a failed attempt
    waiting_for: str = ""  # the host whose budget it waits for


@dataclass(frozen=True)
class Fail:
    reason: str


def own_budget_wait(error: ExtractionError) -> bool:
    """True when our own per-host budget (not the site) held the request back.

    Egress raises RateLimited both for a site's 429/503 and for a budget it
    keeps itself; only the site's answers carry "answered HTTP".
    """
    cause = error.__cause__
    return isinstance(cause, RateLimited) and "answered HTTP" not in cause.message


def after_failure(error: ExtractionError, attempts: int) -> Retry | Fail:
    if error.failure == Failure.RATE_LIMITED and own_budget_wait(error):
        host = urlsplit(error.url).hostname or ""
        return Retry(
            error.reason, error.retry_after or BUDGET_WAIT_SECONDS, counts=False, waiting_for=host
        )
    if not error.retryable or attempts >= MAX_ATTEMPTS:
        return Fail(error.reason)
    return Retry(error.reason, backoff_seconds(attempts, error.retry_after))


def after_store_failure(reason: str, transient: bool, attempts: int) -> Retry | Fail:
    if transient and attempts < MAX_ATTEMPTS:
        return Retry(reason, backoff_seconds(attempts))
    return Fail(reason)
