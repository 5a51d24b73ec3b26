"""Jinja: one environment for full pages and for the regions streams patch.

Autoescaping is always on. The only markup a template may emit unescaped is
what app.safe_content's renderer returns (its filters); a test scans the
templates and the code for anything else marked safe.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined, pass_context, select_autoescape
from litestar import Request

from app.core import i18n
from app.live.streams import stream_attribute

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE_DIR = ROOT / "templates"
STATIC_DIR = ROOT / "static"

_env: Environment | None = None


@cache
def _static_version(path: str) -> str:
    try:
        return hashlib.sha256((STATIC_DIR / path).read_bytes()).hexdigest()[:10]
    except OSError:
        return "0"


def static_url(path: str) -> str:
    """A static file's URL with a content hash, so browsers may cache it for long."""
    return f"/static/{path}?v={_static_version(path)}"


def local_time(value: datetime | None, time_zone: str = "UTC", style: str = "datetime") -> str:
    """A moment in the reader's language and time zone; styles: i18n.DATETIME_STYLES."""
    return i18n.format_datetime(value, time_zone, style)


def iso_time(value: datetime | None) -> str:
    return value.astimezone(UTC).isoformat() if value else ""


def _counted(jinja_ngettext: Any) -> Any:
    """Jinja's ngettext, with the count (`%(num)s`) in the reader's number format: 1.234."""

    @pass_context
    def ngettext(context: Any, singular: str, plural: str, count: int, /, **variables: Any) -> Any:
        variables.setdefault("num", i18n.format_number(count))
        return jinja_ngettext(context, singular, plural, count, **variables)  # Markup: escaped

    return ngettext


def make_environment() -> Environment:
    env = Environment(
        loader=FileSystemLoader(TEMPLATE_DIR),
        autoescape=select_autoescape(default=True, default_for_string=True),
        undefined=StrictUndefined,
        extensions=["jinja2.ext.i18n"],
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.install_gettext_callables(i18n.gettext, i18n.ngettext, newstyle=True)  # type: ignore[attr-defined]
    env.globals["ngettext"] = _counted(env.globals["ngettext"])
    env.globals.update(
        static_url=static_url, stream=stream_attribute, language=i18n.active_language
    )
    env.filters.update(
        local_time=local_time,
        iso_time=iso_time,
        relative_time=i18n.format_relative,
        number=i18n.format_number,
        stored=i18n.translate_stored,
        language_name=i18n.language_name,  # UI text a worker stored, shown in the reader's language
    )
    return env


def use_environment(env: Environment) -> None:
    global _env
    _env = env


def environment() -> Environment:
    if _env is None:
        raise RuntimeError("templates are not set up (app.web.factory.create_app)")
    return _env


def render_block(template: str, block: str, request: Request | None = None, **context: Any) -> str:
    """One named block of a page template: a region a stream or a command patches."""
    tmpl = environment().get_template(template)
    ctx = tmpl.new_context({"request": request, **context})
    return "".join(tmpl.blocks[block](ctx))
