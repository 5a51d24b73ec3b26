"""The hostile corpus, rendered by our renderer, in a real page in Chromium.

Every case goes through every builder that applies (images signed for our
media proxy, as pages render them), and the page also loads
Datastar, which would evaluate any `data-*` attribute that leaked. The page
is served at the real server's origin twice: once with our CSP and once with
none, so the sanitiser and renderer are shown to hold on their own. No case
may cause a request (beyond the page and Datastar itself), a dialog, or
script execution (`window.__pwned`).
"""

from __future__ import annotations

import pytest
from playwright.async_api import Page, Route

from app.media import signer
from app.safe_content import MediaUrl, from_html, from_text, render_html, render_inline, render_text
from app.web.security import SECURITY_HEADERS
from tests.safe_content.hostile_corpus import CASES


def corpus_html(media_url: MediaUrl) -> str:
    sections = []
    for case in CASES:
        rendered = [
            render_html(from_html(case.html)),
            render_html(
                from_html(case.html, base_url="https://news.example.org/a/"), media_url=media_url
            ),
            render_html(from_text(case.html)),
            render_inline(from_html(case.html), media_url=media_url),
            render_text(case.html),
        ]
        sections.append(f'<section id="case-{case.id}">{"".join(rendered)}</section>')
    return (
        "<!doctype html><html><head><meta charset='utf-8'><title>corpus</title>"
        "<script type='module' src='/static/vendor/datastar.js'></script></head>"
        "<body><div data-signals:ready='true'></div>"
        + "".join(sections)
        + "<p id='done' data-text='$ready ? \"rendered\" : \"\"'></p></body></html>"
    )


@pytest.mark.parametrize("with_csp", [True, False], ids=["with-csp", "without-csp"])
async def test_no_corpus_case_requests_alerts_or_runs_script(page: Page, server, watch, with_csp):
    body = corpus_html(signer(server.settings))
    headers = {"content-type": "text/html; charset=utf-8"}
    if with_csp:
        headers.update(SECURITY_HEADERS)

    async def serve(route: Route) -> None:
        await route.fulfill(status=200, headers=headers, body=body)

    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    await page.route(f"{server.url}/__corpus", serve)
    await page.goto("/__corpus")
    # Datastar has started and processed the whole page once this reads "rendered".
    await page.wait_for_function("document.getElementById('done').textContent === 'rendered'")
    await page.wait_for_timeout(500)  # let anything deferred (timers, lazy images) fire

    # Images may only ever be asked of our own media proxy (which refuses private targets).
    allowed = {f"{server.url}/__corpus", f"{server.url}/static/vendor/datastar.js"}
    proxied = f"{server.url}/media/"
    assert [url for url in requests if url not in allowed and not url.startswith(proxied)] == []
    assert watch.dialogs == []
    assert await page.evaluate("() => window.__pwned") is None
    # the corpus really was on the page: one section per case
    assert await page.locator("section[id^=case-]").count() == len(CASES)
    # every third-party subtree sits inside data-ignore
    outside = await page.evaluate(
        """() => [...document.querySelectorAll('section[id^=case-] > *')]
                 .filter(el => !el.hasAttribute('data-ignore')).length"""
    )
    assert outside == 0
