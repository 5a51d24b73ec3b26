"""A member's column widths as a tiny stylesheet of their own.

The wall's bytes are rendered once and shared by everyone with the same role, language
and time zone (app.wall.live), so they carry no widths. Each wall page links this
member's stylesheet instead (`/wall/widths.css?v=...`): one rule per column they sized,
by the column's element id. CSS, not script: it holds while Datastar morphs the shared
regions, and it needs no inline style (the CSP forbids it).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping

from app.wall.types import Width

# Phones show one column per screen whatever its width (static/css/app.css).
DESKTOP = "(min-width: 640px)"


def stylesheet(widths: Mapping[int, Width]) -> str:
    """`--width` tells the column menu which width is pressed (static/js/wall.js)."""
    rules = "".join(
        f"  #col-{column_id} {{ flex-basis: var(--w-{width.value}); --width: {width.value}; }}\n"
        for column_id, width in sorted(widths.items())
        if width != Width.MEDIUM
    )
    return f"@media {DESKTOP} {{\n{rules}}}\n" if rules else ""


def version(widths: Mapping[int, Width]) -> str:
    """Changes whenever the stylesheet does: the link's href, so the browser fetches it anew."""
    return hashlib.sha256(stylesheet(widths).encode()).hexdigest()[:12]
