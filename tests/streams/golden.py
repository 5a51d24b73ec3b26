"""Golden files: a provider's normalised items compared with a reviewed JSON file.

`GOLDEN_UPDATE=1 pytest tests/streams/...` rewrites the expected files; review the diff.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from app.safe_content import render_html, to_json
from app.streams.providers import RemoteItem
from tests.safe_content.checks import fake_media_url, problems_in

GOLDEN = Path(__file__).parent / "golden"


def fixture(name: str) -> bytes:
    return (GOLDEN / name).read_bytes()


def item_fields(item: RemoteItem) -> dict[str, Any]:
    return {
        "remote_id": item.remote_id,
        "canonical_id": item.canonical_id,
        "author_handle": item.author_handle,
        "author_ref": item.author_ref,
        "created_at": item.created_at.isoformat(),
        "url": item.url,
        "media": [{"kind": m.kind, "url": m.url, "alt": m.alt} for m in item.media],
        "metrics": item.metrics,
        "expires_at": item.expires_at.isoformat() if item.expires_at else None,
        "lang": item.lang,
        "plain_text": item.plain_text,
        "content": json.loads(to_json(item.content)),
    }


def assert_golden(name: str, items: list[RemoteItem]) -> None:
    actual = [item_fields(i) for i in items]
    path = GOLDEN / name
    if os.environ.get("GOLDEN_UPDATE"):
        path.write_text(json.dumps(actual, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    assert actual == json.loads(path.read_text(encoding="utf-8"))


def assert_inert(items: list[RemoteItem]) -> None:
    """Every item renders to nothing but our own markup, and no link or image is unsafe."""
    for item in items:
        markup = str(render_html(item.content, media_url=fake_media_url))
        assert problems_in(markup) == [], (item.remote_id, problems_in(markup))
        for url in [item.url, *(m.url for m in item.media)]:
            assert url == "" or url.startswith(("https://", "http://")), url
