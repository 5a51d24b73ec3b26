"""Piccolo's own configuration, for its migration runner and CLI.

The app does not read this: `app.core.db.connect` builds the engine from the
validated settings and binds every table to it, and `python -m app migrate`
points `DB` here at that same engine before running migrations. `DB` is made
lazily (Piccolo's engines connect when constructed) for Piccolo's own CLI.
"""

import os

from piccolo.conf.apps import AppRegistry

APP_REGISTRY = AppRegistry(apps=["app.core.piccolo_app"])


def __getattr__(name: str) -> object:
    if name != "DB":
        raise AttributeError(name)
    from piccolo.engine.postgres import PostgresEngine

    # Piccolo's CLI changes the schema: it runs as the tables' owner.
    dsn = os.environ.get("DATABASE_OWNER_URL") or os.environ["DATABASE_URL"]
    db = PostgresEngine(config={"dsn": dsn})
    globals()["DB"] = db
    return db
