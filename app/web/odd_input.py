"""Path values no row can have are "not found" before any handler runs.

Every numeric path parameter is an id, and ids are PostgreSQL bigints: a larger number
(or one below 1) names nothing, and handed to a query, asyncpg refused it - a 500. A path
value holding a NUL names nothing either: PostgreSQL refuses NUL in text just as loudly.
(Forms keep their own rules: most clean control characters out of what was typed and
save the rest, app.topics for one.)
"""

from __future__ import annotations

from litestar import Request
from litestar.exceptions import NotFoundException

from app.core.db import is_id


async def refuse_odd_path_values(request: Request) -> None:
    """The app's `before_request`: a 404, in the page's or the API's form."""
    for value in request.path_params.values():
        if isinstance(value, int) and not is_id(value):
            raise NotFoundException()
        if isinstance(value, str) and "\x00" in value:
            raise NotFoundException()
