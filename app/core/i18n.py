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
import re
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache, lru_cache
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


@contextmanager
def speaking(language: str) -> Iterator[None]:
    """Text made inside is in `language`: a mail in its recipient's, not the requester's."""
    token = activate(language)
    try:
        yield
    finally:
        _active.reset(token)


def active_language() -> str:
    return _active.get()


def gettext(message: str) -> str:
    return translations(_active.get()).gettext(message)


def N_(message: str) -> str:
    """Marks text for extraction where it is defined; `_()` translates it where it is shown."""
    return message


def ngettext(singular: str, plural: str, n: int) -> str:
    return translations(_active.get()).ngettext(singular, plural, n)


def pick_language(preferred: str | None, accept_language: str | None) -> str:
    """The person's chosen language, else the best match of the browser's header."""
    if preferred in LANGUAGES:
        return preferred
    return asked_language(accept_language) or DEFAULT_LANGUAGE


def environment_language() -> str:
    """The command line's language, found as GNU gettext finds it: the first of LANGUAGE,
    LC_ALL, LC_MESSAGES and LANG that is set ("de_DE.UTF-8", or LANGUAGE's "fr:de"), when
    Newsdesk speaks it, else English. (Not Babel's default_locale: it reads LC_CTYPE,
    which Python itself sets to C.UTF-8 when the named locale is not installed.)"""
    for name in ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG"):
        if value := os.environ.get(name):
            for entry in value.split(":"):
                code = re.split(r"[_.@-]", entry, maxsplit=1)[0].lower()
                if code in LANGUAGES:
                    return code
            break
    return DEFAULT_LANGUAGE


def speak_on_the_command_line() -> None:
    """Activate the environment's language for this process, argparse's own texts
    ("usage:", "options") included: they go through the standard library's gettext, whose
    default domain is our catalogue's name, so it only needs to know where ours live."""
    activate(environment_language())
    _gettext.bindtextdomain("messages", str(LOCALE_DIR))


def asked_language(accept_language: str | None) -> str | None:
    """The offered language an Accept-Language header ranks best, by quality; None if none."""
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
    return None


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
    _sources.cache_clear()
    _translate_stored.cache_clear()
    return written


# Text workers stored ---------------------------------------------------------------------
# Workers write UI text (an import's error, a failed analysis) in English, the source
# language, into rows that people of every language read later. Pages translate it when
# they show it: the catalogue message it was made from is found, its values kept.

_PLACEHOLDER = re.compile(r"%\((\w+)\)s|%%")
_ENGLISH_NUMBER = re.compile(r"\d{1,3}(?:,\d{3})*")


@dataclass(frozen=True)
class _Source:
    pattern: re.Pattern[str]
    msgid: str
    plural: str  # "" unless an ngettext message


def _pattern(source: str) -> re.Pattern[str] | None:
    parts, seen, at = [], set(), 0
    for match in _PLACEHOLDER.finditer(source):
        parts.append(re.escape(source[at : match.start()]))
        name = match.group(1)
        if name is None:
            parts.append("%")
        elif name in seen:
            parts.append(f"(?P={name})")
        else:
            seen.add(name)
            parts.append(f"(?P<{name}>.+?)")
        at = match.end()
    if not seen:
        return None  # no values: an exact lookup finds it
    parts.append(re.escape(source[at:]))
    return re.compile("".join(parts), re.DOTALL)


@cache
def _sources(language: str) -> tuple[_Source, ...]:
    """The catalogue's messages with values, the most literal text first (the most specific)."""
    path = LOCALE_DIR / language / "LC_MESSAGES" / "messages.po"
    if not path.exists():
        return ()
    with path.open("rb") as fh:
        catalog = read_po(fh, locale=language)
    found = []
    for message in catalog:
        ids = message.id if isinstance(message.id, (list, tuple)) else (message.id,)
        if not ids[0] or "%" not in ids[0]:
            continue
        for form in ids:
            pattern = _pattern(form)
            if pattern is not None:
                plural = ids[1] if len(ids) > 1 else ""
                found.append(_Source(pattern, ids[0], plural))
    literal = lambda s: len(_PLACEHOLDER.sub("", s.pattern.pattern))  # noqa: E731
    return tuple(sorted(found, key=literal, reverse=True))


def translate_stored(text: str | None, time_zone: str | None = "UTC") -> str:
    """Stored English UI text in the active language; anything else (a site's own words) as is.
    A moment stored in it (`stored_moment`) reads in the language and `time_zone`."""
    if not text:
        return ""
    language = _active.get()
    found = text if language == DEFAULT_LANGUAGE else _translate_stored(language, text, 2)
    return _local_moments(found, time_zone) if " UTC" in found else found


def stored_moment(value: datetime) -> str:
    """A moment as a worker writes it into stored text ("2026-12-05 14:00 UTC"): one form,
    in UTC, that `translate_stored` finds and shows in each reader's language and zone."""
    return _aware(value).astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


_STORED_MOMENT = re.compile(r"\b(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}) UTC\b")


def _local_moments(text: str, time_zone: str | None) -> str:
    def local(match: re.Match[str]) -> str:
        try:
            moment = datetime.fromisoformat(f"{match[1]}T{match[2]}+00:00")
        except ValueError:
            return match[0]  # not a real date: left as it was written
        return format_datetime(moment, time_zone, "day_time")

    return _STORED_MOMENT.sub(local, text)


@lru_cache(maxsize=4096)
def _translate_stored(language: str, text: str, depth: int) -> str:
    catalog = translations(language)
    exact = catalog.gettext(text)
    if exact != text or depth < 0:
        return exact
    for source in _sources(language):
        match = source.pattern.fullmatch(text)
        if match is None:
            continue
        values = {k: _stored_value(language, v, depth) for k, v in match.groupdict().items()}
        if source.plural:
            count = match.groupdict().get("num") or match.groupdict().get("n") or "1"
            n = int(count.replace(",", "")) if _ENGLISH_NUMBER.fullmatch(count) else 1
            return catalog.ngettext(source.msgid, source.plural, n) % values
        return catalog.gettext(source.msgid) % values
    return text


def _stored_value(language: str, value: str, depth: int) -> str:
    if _ENGLISH_NUMBER.fullmatch(value):
        return numbers.format_decimal(int(value.replace(",", "")), locale=Locale.parse(language))
    return _translate_stored(language, value, depth - 1)


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


def language_name(code: str) -> str:
    """A content language's name in the reader's language: "en" reads "Englisch" in German."""
    return str(_locale().languages.get(code, code)) if code else ""


def format_relative(value: datetime | None, now: datetime | None = None) -> str:
    """ "3 minutes ago" / "vor 3 Minuten"; the future reads "in 3 minutes"."""
    if value is None:
        return ""
    delta = _aware(value) - (now or datetime.now(UTC))
    return dates.format_timedelta(delta, add_direction=True, threshold=1.0, locale=_locale())


def format_number(value: float | int | None) -> str:
    """1,234 / 1.234."""
    return "" if value is None else _number(_active.get(), value)


def format_compact(value: float | int) -> str:
    """A short count as the language abbreviates it: 12.3K / 1,2 Mio. Where a language has
    no short form (German below a million), the full number with its grouping: 12.345."""
    return _compact(_active.get(), value)


# Counts repeat (a wall shows hundreds, mostly small): Babel's formatting was a third of
# a full wall's render, so each (language, value) is formatted once.
@lru_cache(maxsize=8192)
def _number(language: str, value: float | int) -> str:
    return numbers.format_decimal(value, locale=_parsed(language))


@lru_cache(maxsize=8192)
def _compact(language: str, value: float | int) -> str:
    short = numbers.format_compact_decimal(value, locale=_parsed(language), fraction_digits=1)
    return _number(language, round(value)) if short.isdigit() else short


_ = gettext
