"""How the library names its sources, analysis states and warnings (UI text)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from app.core.i18n import gettext


def N_(message: str) -> str:
    """Mark a message for extraction; translated where it is shown."""
    return message


SOURCES = {
    "manual": N_("Saved link"),
    "import": N_("Bulk import"),  # a source, not the verb on the import page's button
    "feed": N_("Feed"),
    "arxiv": N_("arXiv"),
    "api": N_("API"),
    "wall": N_("Wall post"),
}
STATES = {
    "pending": N_("Waiting for analysis"),
    "running": N_("Being analysed"),
    "completed": N_("Analysed"),
    "failed": N_("Analysis failed"),
    "skipped": N_("Not analysed"),
}
SORTS = {
    "relevance": N_("Best match"),
    "newest": N_("Newest first"),
    "oldest": N_("Oldest first"),
    "saved": N_("Recently saved"),
}
WARNINGS = {
    "probable_consent_wall": N_("Probably a consent wall, not the article"),
    "probable_paywall": N_("Probably behind a paywall: the text may be incomplete"),
    "pdf_link_only": N_("A PDF: kept as a link with its metadata"),
}


def _label(table: dict[str, str]) -> Callable[[str], str]:
    def label(value: str) -> str:
        return gettext(table[value]) if value in table else value.replace("_", " ")

    return label


source_label = _label(SOURCES)
state_label = _label(STATES)
warning_label = _label(WARNINGS)
sort_label = _label(SORTS)

# What the library's and the reader's templates call.
TEMPLATE_HELPERS: dict[str, Any] = {
    "source_label": source_label,
    "state_label": state_label,
    "warning_label": warning_label,
    "sort_label": sort_label,
}
