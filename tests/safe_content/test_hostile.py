"""Every hostile corpus case, through every entry point that accepts it."""

from __future__ import annotations

import base64
import re
import time

import pytest

from app.safe_content import (
    from_facets,
    from_html,
    from_json,
    from_text,
    render_html,
    render_inline,
    render_text,
    to_json,
    to_text,
    validate,
)
from app.safe_content import guard as guard_module
from tests.safe_content.checks import fake_media_url, problems_in
from tests.safe_content.hostile_corpus import CASES, Case

IDS = [case.id for case in CASES]
BASE = "https://news.example/articles/1"


def test_corpus_is_large_with_unique_stable_ids() -> None:
    assert len(CASES) >= 120
    assert len(set(IDS)) == len(IDS)
    assert all(re.fullmatch(r"[a-z0-9-]+", case_id) for case_id in IDS)


def _payloads(case: Case) -> str:
    decoded = [
        base64.b64decode(chunk + "==").decode(errors="replace")
        for chunk in re.findall(r"base64,([A-Za-z0-9+/=]+)", case.html)
    ]
    return case.html + "".join(decoded)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_case_carries_its_id_in_the_payload(case: Case) -> None:
    # The browser test attributes a request or dialog to a case by this id.
    assert case.id in _payloads(case)


def _assert_safe(markup: str) -> None:
    problems = problems_in(markup)
    assert not problems, "\n".join(problems) + "\n" + markup[:2000]


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_from_html_renders_safely(case: Case) -> None:
    doc = validate(from_html(case.html))
    _assert_safe(render_html(doc, media_url=fake_media_url))
    _assert_safe(render_html(doc))
    _assert_safe(render_inline(doc))


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_from_html_with_base_url_renders_safely(case: Case) -> None:
    doc = validate(from_html(case.html, base_url=BASE))
    _assert_safe(render_html(doc, media_url=fake_media_url))


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_from_html_through_the_guard_renders_safely(
    case: Case, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(guard_module, "GUARD_TAG_THRESHOLD", 0)
    doc = validate(from_html(case.html, base_url=BASE))
    _assert_safe(render_html(doc, media_url=fake_media_url))


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_from_text_renders_safely_and_keeps_the_words(case: Case) -> None:
    doc = validate(from_text(case.html))
    markup = render_html(doc, media_url=fake_media_url)
    _assert_safe(markup)
    # Plain text is shown, not interpreted: the markup comes back as text.
    if "<script" in case.html:
        assert "&lt;script" in markup


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_render_text_renders_safely(case: Case) -> None:
    _assert_safe(render_text(case.html))


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_from_facets_renders_safely(case: Case) -> None:
    # The whole raw string as a link facet: the URI is hostile, the text is hostile.
    data = case.html.encode()
    facets = [
        {
            "index": {"byteStart": 0, "byteEnd": len(data)},
            "features": [{"$type": "app.bsky.richtext.facet#link", "uri": case.html}],
        }
    ]
    doc = validate(from_facets(case.html, facets))
    _assert_safe(render_html(doc, media_url=fake_media_url))


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_stored_json_round_trip_stays_safe(case: Case) -> None:
    doc = from_html(case.html, base_url=BASE)
    stored = from_json(to_json(doc))
    assert stored == doc
    assert isinstance(to_text(stored), str)
    _assert_safe(render_html(stored, media_url=fake_media_url))


@pytest.mark.parametrize("case", [c for c in CASES if c.category == "bombs"], ids=str)
def test_work_bombs_are_fast(case: Case) -> None:
    started = time.process_time()
    render_html(from_html(case.html * 5))
    assert time.process_time() - started < 2.0
