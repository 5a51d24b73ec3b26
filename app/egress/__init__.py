"""Egress: the one way Newsdesk reaches the internet.

Every outbound request (articles, feeds, arXiv, platform APIs, the media
proxy) goes through the process's `Egress`: http and https only, standard
ports, public addresses only, checked on the address actually dialled and
again on every redirect; bodies capped after decoding, one total deadline,
and per-host budgets shared by all processes through Redis. See
docs/decisions/egress.md.
"""

from app.egress.client import (
    DEFAULT_ACCEPT,
    Egress,
    close_egress,
    egress,
    open_egress,
    use_egress,
)
from app.egress.errors import (
    EgressBlocked,
    EgressConnectError,
    EgressError,
    EgressProtocolError,
    EgressTimeout,
    EgressTooLarge,
    HttpStatusError,
    RateLimited,
)
from app.egress.network import Resolver
from app.egress.policy import HostBudget
from app.egress.types import Fetched, Streamed

__all__ = [
    "DEFAULT_ACCEPT",
    "Egress",
    "EgressBlocked",
    "EgressConnectError",
    "EgressError",
    "EgressProtocolError",
    "EgressTimeout",
    "EgressTooLarge",
    "Fetched",
    "HostBudget",
    "HttpStatusError",
    "RateLimited",
    "Resolver",
    "Streamed",
    "close_egress",
    "egress",
    "open_egress",
    "use_egress",
]
