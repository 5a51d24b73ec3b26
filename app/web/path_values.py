"""Path values that cannot name anything are "not found" before any handler runs.

Every numeric path parameter is an id, and ids are PostgreSQL bigints: a larger number
(or one below 1) names nothing, and handing it to a query made asyncpg refuse it - a 500.
PostgreSQL refuses NUL in text just as loudly, so a path value holding one names nothing
either.
"""

from __future__ import annotations

from litestar import Request
from litestar.exceptions import NotFoundException

MAX_ID = 2**63 - 1  # bigint


def is_id(value: int) -> bool:
    """Whether `value` can be a row's id."""
    return 0 < value <= MAX_ID


async def refuse_impossible_path_values(request: Request) -> None:
    """The app's `before_request`: a 404 (in the page's or the API's form) for such values."""
    for value in request.path_params.values():
        if isinstance(value, int) and not is_id(value):
            raise NotFoundException()
        if isinstance(value, str) and "\x00" in value:
            raise NotFoundException()
