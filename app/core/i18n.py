"""UI text: every string a person reads goes through `_()` (gettext).

Catalogs live in app/locale/<lang>/LC_MESSAGES/messages.mo (made with Babel);
English is the source language and needs none. The active language is per
request (or per job), kept in a context variable so concurrent requests in
different languages do not mix.
"""

from __future__ import annotations

import contextvars
import gettext as _gettext
from functools import cache
from pathlib import Path

LOCALE_DIR = Path(__file__).resolve().parents[1] / "locale"
LANGUAGES: dict[str, str] = {"en": "English"}  # German joins once its catalog lands
DEFAULT_LANGUAGE = "en"

_active: contextvars.ContextVar[str] = contextvars.ContextVar(
    "nd_language", default=DEFAULT_LANGUAGE
)


@cache
def translations(language: str) -> _gettext.NullTranslations:
    return _gettext.translation("messages", LOCALE_DIR, languages=[language], fallback=True)


def activate(language: str) -> contextvars.Token[str]:
    return _active.set(language if language in LANGUAGES else DEFAULT_LANGUAGE)


def active_language() -> str:
    return _active.get()


def gettext(message: str) -> str:
    return translations(_active.get()).gettext(message)


def ngettext(singular: str, plural: str, n: int) -> str:
    return translations(_active.get()).ngettext(singular, plural, n)


def pick_language(preferred: str | None, accept_language: str | None) -> str:
    """The person's chosen language, else the best match of the browser's header."""
    if preferred in LANGUAGES:
        return preferred
    for part in (accept_language or "").split(","):
        code = part.split(";")[0].strip().lower()[:2]
        if code in LANGUAGES:
            return code
    return DEFAULT_LANGUAGE


_ = gettext
