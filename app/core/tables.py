"""The registry of every domain's Piccolo tables.

A domain adds its tables module here once; the database binding, the test
clean-up and Piccolo's app config all read this one list.
"""

from __future__ import annotations

import importlib

from piccolo.table import Table

# Modules holding Piccolo tables, in dependency order (referenced tables first).
TABLE_MODULES: tuple[str, ...] = (
    "app.accounts.tables",
    "app.events.tables",
    "app.topics.tables",
    "app.articles.tables",
    "app.streams.tables",
    "app.wall.tables",
    "app.imports.tables",
)


def all_tables() -> list[type[Table]]:
    tables: list[type[Table]] = []
    for name in TABLE_MODULES:
        module = importlib.import_module(name)
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and issubclass(value, Table)
                and value is not Table
                and value.__module__ == name
            ):
                tables.append(value)
    return tables
