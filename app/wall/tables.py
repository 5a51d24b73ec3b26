"""The wall's own table: each member's column widths (the columns are app.streams')."""

from __future__ import annotations

from piccolo.columns import BigInt, Text
from piccolo.table import Table


class WallColumnWidth(Table, tablename="wall_column_widths"):
    """How wide one member shows one column; no row means medium."""

    workspace_id = BigInt(primary_key=True)  # with user_id, column_id: the key
    user_id = BigInt()
    column_id = BigInt()
    width = Text()  # narrow | medium | wide
