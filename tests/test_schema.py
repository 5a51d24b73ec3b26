"""The Piccolo tables and the migrated schema describe the same columns."""

import pytest

from app.core import db
from app.core.tables import all_tables


@pytest.mark.parametrize("table", all_tables(), ids=lambda t: t._meta.tablename)
async def test_table_columns_match_the_migrated_schema(table, clean_db):
    rows = await db.fetch(
        "SELECT column_name FROM information_schema.columns WHERE table_name = $1",
        table._meta.tablename,
    )
    in_database = {row["column_name"] for row in rows}
    in_piccolo = {column._meta.db_column_name for column in table._meta.columns}
    assert in_database == in_piccolo


async def test_every_table_is_scoped_or_global_by_design(clean_db):
    """Every table carries workspace_id, except the few that are global by nature."""
    global_by_design = {"users", "workspaces", "sessions", "password_resets"}
    for table in all_tables():
        columns = {column._meta.db_column_name for column in table._meta.columns}
        name = table._meta.tablename
        assert name in global_by_design or "workspace_id" in columns, name
