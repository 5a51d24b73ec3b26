"""UI text: every string a person reads goes through `_()` (gettext).

Catalogs live in app/locale/<lang>/LC_MESSAGES/messages.po; set-up compiles
them to .mo (`compile_catalogs`, never in git). English is the source language
and needs none. The active language is per
request (or per job), kept in a context variable so concurrent requests in
different languages do not mix.
"""

from __future__ import annotations

import contextvars
import gettext as _gettext
import os
import tempfile
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from zoneinfo import ZoneInfo

from babel import Locale, dates, numbers
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po

LOCALE_DIR = Path(__file__).resolve().parents[1] / "locale"
LANGUAGES: dict[str, str] = {"en": "English", "de": "Deutsch"}
# Catalogues that exist but are not offered until they are translated.
PREPARED_LANGUAGES = ("fr", "it", "es")
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
    ranked: list[tuple[float, int, str]] = []
    for position, part in enumerate((accept_language or "").split(",")):
        code, _sep, params = part.partition(";")
        quality = 1.0
        if params.strip().startswith("q="):
            try:
                quality = float(params.strip()[2:])
            except ValueError:
                quality = 0.0
        ranked.append((-quality, position, code.strip().lower()[:2]))
    for quality, _position, code in sorted(ranked):
        if code in LANGUAGES and quality < 0:
            return code
    return DEFAULT_LANGUAGE


def compile_catalogs(locale_dir: Path = LOCALE_DIR) -> list[Path]:
    """Compile every messages.po next to itself as messages.mo (set-up and tests).

    Written to a temporary file and renamed, so parallel test workers never read half a file.
    """
    written = []
    for po_path in sorted(locale_dir.glob("*/LC_MESSAGES/messages.po")):
        mo_path = po_path.with_suffix(".mo")
        if mo_path.exists() and mo_path.stat().st_mtime >= po_path.stat().st_mtime:
            continue
        with po_path.open("rb") as po_file:
            catalog = read_po(po_file, locale=po_path.parents[1].name)
        fd, tmp = tempfile.mkstemp(dir=po_path.parent, suffix=".mo.tmp")
        with os.fdopen(fd, "wb") as mo_file:
            write_mo(mo_file, catalog)
        os.replace(tmp, mo_path)
        written.append(mo_path)
    translations.cache_clear()
    return written


# Dates, times and numbers: Babel, in the active language and the reader's time zone.
def _locale() -> Locale:
    return _parsed(_active.get())


@cache
def _parsed(language: str) -> Locale:
    """Babel's Locale for a language, parsed once (parsing it per date or count was a
    quarter of a full wall's render)."""
    return Locale.parse(language)


def _zone(time_zone: str | None) -> ZoneInfo:
    try:
        return ZoneInfo(time_zone or "UTC")
    except (KeyError, ValueError):
        return ZoneInfo("UTC")


def _aware(value: datetime) -> datetime:
    return value if value.tzinfo else value.replace(tzinfo=UTC)


# Named styles, so templates say what they show and each language orders it its own way.
DATETIME_STYLES = {
    "date": "yMMMd",  # Nov 30, 2026 / 30. Nov. 2026
    "day_time": "short",  # Nov 30, 2:05 PM / 30. Nov., 14:05 (day and month, no year)
    "day_time_seconds": "medium",
    "datetime": "short",  # 30/11/2026, 14:05 / 30.11.26, 14:05
    "time": "short",  # 2:05 PM / 14:05
}


def format_datetime(
    value: datetime | None, time_zone: str | None = "UTC", style: str = "datetime"
) -> str:
    if value is None:
        return ""
    local = _aware(value).astimezone(_zone(time_zone))
    locale = _locale()
    pattern = DATETIME_STYLES.get(style, style)
    if style == "date":
        return dates.format_skeleton(pattern, local, tzinfo=local.tzinfo, locale=locale)
    if style == "time":
        return dates.format_time(local, pattern, tzinfo=local.tzinfo, locale=locale)
    if style.startswith("day_time"):
        day = dates.format_skeleton("MMMd", local, locale=locale)
        time = dates.format_time(local, pattern, tzinfo=local.tzinfo, locale=locale)
        return str(locale.datetime_formats["short"]).format(time, day)
    return dates.format_datetime(local, pattern, tzinfo=local.tzinfo, locale=locale)


def format_relative(value: datetime | None, now: datetime | None = None) -> str:
    """ "3 minutes ago" / "vor 3 Minuten"; the future reads "in 3 minutes"."""
    if value is None:
        return ""
    delta = _aware(value) - (now or datetime.now(UTC))
    return dates.format_timedelta(delta, add_direction=True, threshold=1.0, locale=_locale())


def format_number(value: float | int | None) -> str:
    """1,234 / 1.234."""
    return "" if value is None else numbers.format_decimal(value, locale=_locale())


def format_compact(value: float | int) -> str:
    """A short count as the language abbreviates it: 12.3K / 1,2 Mio. Where a language has
    no short form (German below a million), the full number with its grouping: 12.345."""
    short = numbers.format_compact_decimal(value, locale=_locale(), fraction_digits=1)
    return numbers.format_decimal(round(value), locale=_locale()) if short.isdigit() else short


_ = gettext
