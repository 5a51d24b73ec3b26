"""Deciding a source's next state and poll time after a poll, and a column's state. Pure.

success        -> ready, next poll after the interval +/-20 %
failure n      -> interval x 2^n +/-20 %, never more than 30 min; n >= 3: error
                  (still retried at the cap: never a silent permanent stop)
not found      -> error at once (the platform answered: no such account), retried on the
                  same back-off (an account made later, or a feed back, heals)
429/Retry-After-> rate_limited until then (not a failure: the host is fine)
our Redis down -> the next failure's back-off, stale (or pending), not counted: our outage,
                  not the source's, never makes it `error`
ledger empty   -> budget_paused until the window rolls over (or the cap is raised)
key refused    -> error at once, retried at the 30 min cap
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, time, timedelta, tzinfo

from app.streams.types import AggregateState, SourceState, SourceView

JITTER = 0.2  # +/- share of every delay
BACKOFF_CAP_S = 30 * 60.0
ERROR_AFTER = 3  # consecutive failures that make a source `error`
STALE_FACTOR = 2  # a ready source not polled for this many intervals is stale


@dataclass(frozen=True)
class Outcome:
    state: SourceState
    delay_s: float  # seconds from now to the next poll
    failures: int  # consecutive failures after this poll


def _jittered(seconds: float, jitter: float) -> float:
    return seconds * (1 + JITTER * max(-1.0, min(1.0, jitter)))


def after_success(interval_ms: int, *, jitter: float = 0.0) -> Outcome:
    return Outcome(SourceState.READY, _jittered(interval_ms / 1000, jitter), 0)


def after_failure(
    interval_ms: int, failures_before: int, *, polled_before: bool, jitter: float = 0.0
) -> Outcome:
    """`polled_before`: the source ever worked (its items are shown, so it is `stale`)."""
    failures = failures_before + 1
    if failures >= ERROR_AFTER:
        state = SourceState.ERROR
    else:
        state = SourceState.STALE if polled_before else SourceState.PENDING
    return Outcome(state, _backoff(interval_ms, failures, jitter), failures)


def after_not_found(interval_ms: int, failures_before: int, *, jitter: float = 0.0) -> Outcome:
    """The platform answered that the account (or feed) does not exist: a permanent answer,
    so the source is `error` at once - its columns say so after this first poll instead of
    "Fetching the first posts..." until the third. A timeout is no answer (`after_failure`).
    Still retried on the back-off: a 404 costs the platform little, and a handle made later
    (or a feed back after a move) heals by itself."""
    failures = failures_before + 1
    return Outcome(SourceState.ERROR, _backoff(interval_ms, failures, jitter), failures)


def after_outage(
    interval_ms: int, failures: int, *, polled_before: bool, jitter: float = 0.0
) -> Outcome:
    """Our own Redis (egress budgets) was unreachable: the source did nothing wrong. Retried
    after the back-off its next failure would get; the count stays, so it never turns `error`."""
    state = SourceState.STALE if polled_before else SourceState.PENDING
    return Outcome(state, _backoff(interval_ms, failures + 1, jitter), failures)


def _backoff(interval_ms: int, failures: int, jitter: float) -> float:
    """The interval doubled per failure, jittered, never more than the cap."""
    delay = min(interval_ms / 1000 * 2**failures, BACKOFF_CAP_S)
    return min(_jittered(delay, jitter), BACKOFF_CAP_S)


def after_rate_limit(
    interval_ms: int, failures: int, retry_after_s: float | None, *, jitter: float = 0.0
) -> Outcome:
    """Wait what the host asked (or one interval when it did not say), at least the interval."""
    wait = retry_after_s if retry_after_s is not None else _jittered(interval_ms / 1000, jitter)
    return Outcome(SourceState.RATE_LIMITED, max(wait, 1.0), failures)


def after_rejection(failures_before: int, jitter: float = 0.0) -> Outcome:
    """The platform refused the key itself: `error` now, retried at the back-off cap (the key
    may be fixed meanwhile), never a silent stop."""
    failures = max(failures_before + 1, ERROR_AFTER)
    return Outcome(
        SourceState.ERROR, min(_jittered(BACKOFF_CAP_S, jitter), BACKOFF_CAP_S), failures
    )


def budget_paused(window_end: datetime, now: datetime, failures: int) -> Outcome:
    return Outcome(
        SourceState.BUDGET_PAUSED, max((window_end - now).total_seconds(), 1.0), failures
    )


def window_start(now: datetime, window: timedelta, zone: tzinfo | None = None) -> datetime:
    """The ledger window `now` falls in: windows start at multiples of `window` since the epoch,
    or, with a `zone`, at that zone's midnight (one-day windows: Google's quota day)."""
    if zone is not None:
        local = now.astimezone(zone)
        return datetime.combine(local.date(), time.min, tzinfo=zone).astimezone(now.tzinfo)
    epoch = datetime(1970, 1, 1, tzinfo=now.tzinfo)
    return epoch + window * ((now - epoch) // window)


def window_end(start: datetime, window: timedelta, zone: tzinfo | None = None) -> datetime:
    """When the window that began at `start` ends: the next local midnight with a `zone`
    (23 or 25 hours on the days clocks change), else `start + window`."""
    if zone is not None:
        local = start.astimezone(zone)
        after = datetime.combine(local.date() + timedelta(days=1), time.min, tzinfo=zone)
        return after.astimezone(start.tzinfo)
    return start + window


# A column's state: the worst of its sources (seed 003 section 3.5) -----------------------------


def _health(source: SourceView, now: datetime) -> str:
    state = source.state
    if state in (SourceState.ERROR, SourceState.DISABLED, SourceState.UNSUPPORTED):
        return "error"
    if state in (SourceState.RATE_LIMITED, SourceState.BUDGET_PAUSED):
        return "paused"
    if state == SourceState.PENDING:
        # Its first polls failed (an account not found): not "fetching" beside working sources.
        return "retrying" if source.last_error else "pending"
    if state == SourceState.STALE:
        return "stale"
    too_old = timedelta(milliseconds=source.interval_ms * STALE_FACTOR)
    if source.last_polled_at is None or now - source.last_polled_at > too_old:
        return "stale"
    return "ready"


def aggregate_state(
    sources: Sequence[SourceView], *, paused: bool, has_items: bool, now: datetime
) -> AggregateState:
    """ready | pending | stale | error | partial | empty | paused, worst first."""
    if paused:
        return AggregateState.PAUSED
    if not sources:
        return AggregateState.EMPTY  # every platform was unsupported
    health = {_health(s, now) for s in sources}
    if len(health) == 1:
        only = next(iter(health))
        if only == "ready":
            return AggregateState.READY if has_items else AggregateState.EMPTY
        return AggregateState.PENDING if only == "retrying" else AggregateState(only)
    if health & {"error", "paused", "retrying"}:
        return AggregateState.PARTIAL
    if "stale" in health:
        return AggregateState.STALE
    return AggregateState.PENDING
