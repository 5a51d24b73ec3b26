"""Our own words inside a stored tree (a `Label` node): kept as a key, said in the reader's
language each time the tree is shown. A post is stored once and read by every member of the
workspace, each in their own language; words written into it as text at ingest stayed in the
worker's (docs/decisions/safe-content.md, "Labels")."""

from __future__ import annotations

from typing import Literal

from app.core.i18n import N_, gettext

LabelKey = Literal["watch_on_youtube", "replying_to", "quoted_post", "quoted_post_unavailable"]

LABELS: dict[str, str] = {
    "watch_on_youtube": N_("Watch on YouTube"),
    "replying_to": N_("Replying to"),
    "quoted_post": N_("quoted post"),
    "quoted_post_unavailable": N_("Quoted post unavailable"),
}


def label_text(key: str) -> str:
    """The label's words in the active language ("" for a key this build does not know)."""
    message = LABELS.get(key)
    return gettext(message) if message else ""
