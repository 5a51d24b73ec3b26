"""One OS process submitting scraped articles: `python -m tests.articles.submit_process ARGS`.

ARGS is one JSON object: database_url, redis_url, redis_prefix, workspace_id,
urls (submitted `copies` times each, all at once), start_at (a time.time()
to wait for, so several processes start together). Prints the outcomes as
one JSON list on stdout.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time

from app.articles.services import process_scraped_article
from app.core import config, db
from app.core import redis as core_redis
from tests.articles.helpers import article_event
from tests.fixtures import make_test_settings


async def main(args: dict) -> list[dict]:
    settings = make_test_settings(
        database_url=args["database_url"],
        redis_url=args["redis_url"],
        redis_prefix=args["redis_prefix"],
    )
    config.activate(settings)
    await db.connect(settings, pool_max=args.get("pool", 8))
    await core_redis.connect_redis(settings)
    try:
        events = [article_event(url) for url in args["urls"] for _ in range(args["copies"])]
        await asyncio.sleep(max(0.0, args["start_at"] - time.time()))
        outcomes = await asyncio.gather(
            *(process_scraped_article(args["workspace_id"], e) for e in events)
        )
        return [
            {"kind": o.kind.value, "article_id": o.article_id, "reason": o.reason} for o in outcomes
        ]
    finally:
        await core_redis.disconnect_redis()
        await db.disconnect()


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(json.loads(sys.argv[1])))))
