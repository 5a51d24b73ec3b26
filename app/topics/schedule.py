"""When a source runs next, and what the egress budgets must hold for arXiv. Pure.

A healthy source runs every `interval_seconds`. A failed run backs off
exponentially from `BACKOFF_BASE`, doubling per consecutive failure up to
`BACKOFF_CAP` (or the interval, if that is longer), never sooner than a
Retry-After the remote sent, with +/-20% jitter so sources that failed
together do not all come back in the same second.
"""

from __future__ import annotations

from app.core.config import Settings

BACKOFF_BASE = 120.0  # seconds after the first failure
PARTIAL_RETRY_BASE = 120.0  # seconds after a run whose entries partly failed
BACKOFF_CAP = 6 * 3600.0  # the longest wait after failures (unless the interval is longer)
JITTER = 0.2  # +/- share of the delay

# arXiv's terms: no more than one request every three seconds, one connection
# at a time. The API and the HTML renderings live on different hosts; both get it.
ARXIV_BUDGETS: dict[str, str] = {
    "export.arxiv.org": "0.333/1/1",
    "arxiv.org": "0.333/1/1",
}


def next_run_delay(
    interval_seconds: int, failures: int, *, retry_after: float | None = None, jitter: float = 0.0
) -> float:
    """Seconds until the next run; `failures` counts consecutive failures including this run.

    `jitter` in [-1, 1] (random in production, 0 in tests) spreads retries.
    """
    if failures <= 0:
        return float(interval_seconds)
    cap = max(BACKOFF_CAP, float(interval_seconds))
    delay = min(BACKOFF_BASE * 2 ** (failures - 1), cap)
    delay *= 1 + JITTER * max(-1.0, min(1.0, jitter))
    if retry_after is not None:
        delay = max(delay, retry_after)
    return delay


def partial_retry_delay(interval_seconds: int, partials: int, *, jitter: float = 0.0) -> float:
    """Seconds until a partial run's failed entries are tried again.

    `partials` counts consecutive partial runs including this one: 2 min,
    doubling each time, never later than the source's own interval.
    """
    delay = min(PARTIAL_RETRY_BASE * 2 ** max(partials - 1, 0), float(interval_seconds))
    return delay * (1 + JITTER * max(-1.0, min(1.0, jitter)))


def with_arxiv_budgets(settings: Settings) -> Settings:
    """`settings` whose EGRESS_HOST_BUDGETS also hold arXiv's limits, unless the operator set them.

    The operator's entry for a host wins; the defaults only fill the gap, so
    the arXiv limit holds even when EGRESS_HOST_BUDGETS names other hosts.
    """
    configured = {entry.partition("=")[0].strip().lower() for entry in settings.egress_host_budgets}
    missing = [f"{host}={spec}" for host, spec in ARXIV_BUDGETS.items() if host not in configured]
    if not missing:
        return settings
    return settings.model_copy(
        update={"egress_host_budgets": [*settings.egress_host_budgets, *missing]}
    )
