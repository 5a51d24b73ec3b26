"""When an analysis is tried again: pure numbers, no I/O."""

from __future__ import annotations

from app.analysis.types import AnalysisStatus
from app.core import leases

# A claim lasts a minute, renewed every 20 s while the analyser runs (app.core.leases).
LEASE_SECONDS = leases.LEASE_SECONDS
BASE_DELAY_SECONDS = 30.0
MAX_DELAY_SECONDS = 6 * 3600.0
QUICK_ATTEMPTS = 5  # after this many failures the status says "failed" (retries go on, slowly)


def backoff_seconds(attempts: int, retry_after: float | None = None) -> float:
    """30 s x 2^(attempts - 1), capped at 6 h; never sooner than the other side asked."""
    delay = min(BASE_DELAY_SECONDS * 2 ** max(attempts - 1, 0), MAX_DELAY_SECONDS)
    if retry_after is not None:
        delay = max(delay, min(retry_after, MAX_DELAY_SECONDS))
    return delay


def status_after_failure(attempts: int) -> AnalysisStatus:
    return AnalysisStatus.FAILED if attempts >= QUICK_ATTEMPTS else AnalysisStatus.PENDING
