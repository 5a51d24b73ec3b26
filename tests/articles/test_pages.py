"""The library and reader pages, their live streams, and the articles API."""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import replace
from datetime import UTC, datetime
from html import unescape
from urllib.parse import parse_qs, urlsplit

import pytest

from app.accounts import services as accounts
from app.analysis.services import Run, run_analysis
from app.articles.live import MAX_CHANGED_ROWS
from app.articles.services import delete_article, process_scraped_article
from app.articles.types import LIBRARY_TOPIC, ArxivData, ArxivSection, Source, Warning
from app.core import db
from app.live.notices import publish
from app.safe_content import from_html
from tests.articles.helpers import ENGLISH, article_event, arxiv_event
from tests.factories import post_form, sign_in
from tests.live_client import LiveStream


async def signed_in(client, people, role: str = "editor"):
    person = await people.member(role)
    await sign_in(client, person.email)
    return person


async def save(workspace_id: int, **fields) -> int:
    outcome = await process_scraped_article(workspace_id, article_event(**fields))
    assert outcome.article_id is not None, outcome.reason
    return outcome.article_id


def ids_in(html: str) -> list[int]:
    return [int(i) for i in re.findall(r'<li class="row article-row" id="article-(\d+)"', html)]


def next_link(html: str) -> str | None:
    found = re.search(r'<a href="([^"]+)" rel="next"', html)
    return unescape(found.group(1)) if found else None


# The library -------------------------------------------------------------------------


async def test_library_lists_articles_newest_first(client, people):
    person = await signed_in(client, people)
    first = await save(person.workspace_id, title="First story")
    second = await save(person.workspace_id, title="Second story")

    page = await client.get("/articles")

    assert page.status_code == 200
    assert ids_in(page.text) == [second, first]
    assert "Second story" in page.text
    assert 'data-init="@get(&#39;/articles/stream' in page.text


async def test_an_empty_library_says_how_articles_arrive(client, people):
    await signed_in(client, people, "viewer")

    page = await client.get("/articles")

    assert page.status_code == 200
    assert "The library is empty." in page.text
    assert "The library is empty." in (await client.get("/articles?q=anything")).text


async def test_a_search_without_hits_says_so(client, people):
    person = await signed_in(client, people, "viewer")
    await save(person.workspace_id, title="Trams")

    page = await client.get("/articles?q=zeppelin")

    assert page.status_code == 200
    assert "No article matches" in page.text
    assert "The library is empty." not in page.text


async def test_search_ranks_title_hits_first_and_highlights_them_from_text(client, people):
    person = await signed_in(client, people)
    ws = person.workspace_id
    in_text = await save(ws, title="City news", text="The tram extension was approved. " * 3)
    in_title = await save(ws, title="Tram extension approved", text="The council voted on Tuesday.")
    await save(ws, title="Weather", text="Rain all week.")

    page = await client.get("/articles", params={"q": "tram"})

    assert ids_in(page.text) == [in_title, in_text]
    assert "<strong>tram</strong>" in page.text.lower()
    assert page.text.count('class="snippet"') == 2


async def test_search_snippets_are_escaped_text_never_markup(client, people):
    person = await signed_in(client, people)
    article_id = await save(
        person.workspace_id,
        title="Hostile",
        text='Budget: 5 < 6 & 7 > 3, "quoted", &lt;b&gt; and <script>alert(1)</script> budget',
    )

    page = await client.get("/articles", params={"q": "budget"})

    snippet = re.search(r'<div class="snippet" lang="[a-z]*">(.*?)</div>', page.text, re.S).group(1)
    assert "data-ignore" in snippet
    assert set(re.findall(r"<(/?[a-z]+)", snippet)) <= {"span", "/span", "strong", "/strong"}
    assert "5 &lt; 6 &amp; 7 &gt; 3" in snippet
    assert "&amp;lt;b&amp;gt;" in snippet  # an entity in the text stays text
    assert "<script>alert" not in page.text
    reader = await client.get(f"/articles/{article_id}")
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in reader.text
    assert "<script>alert" not in reader.text


async def test_search_understands_phrases_and_exclusions(client, people):
    person = await signed_in(client, people)
    ws = person.workspace_id
    both = await save(ws, title="Night buses and trams", text="Night buses run on six routes.")
    buses = await save(ws, title="Late buses", text="Buses run late at night on weekends.")

    phrase = await client.get("/articles", params={"q": '"night buses"'})
    excluded = await client.get("/articles", params={"q": "buses -trams"})

    assert ids_in(phrase.text) == [both]
    assert ids_in(excluded.text) == [buses]


async def test_filters_by_topic_source_and_analysis_state(client, people, settings):
    person = await signed_in(client, people)
    ws = person.workspace_id
    topic = await db.fetchval(
        "INSERT INTO topics (workspace_id, name) VALUES ($1, 'Transport') RETURNING id", ws
    )
    in_topic = await save(ws, topic_id=topic, source=Source.FEED)
    manual = await save(ws, source=Source.MANUAL)
    analysed = await save(ws, source=Source.IMPORT)
    assert await run_analysis(ws, analysed, settings) == Run.COMPLETED

    by_topic = await client.get("/articles", params={"topic": str(topic)})
    by_source = await client.get("/articles", params={"source": "manual"})
    done = await client.get("/articles", params={"state": "completed"})
    waiting = await client.get("/articles", params={"state": "pending"})

    assert ids_in(by_topic.text) == [in_topic]
    assert "Transport" in by_topic.text
    assert ids_in(by_source.text) == [manual]
    assert ids_in(done.text) == [analysed]
    assert ids_in(waiting.text) == [manual, in_topic]
    assert f'<option value="{topic}" selected>' in by_topic.text  # the form keeps the choice


async def test_the_source_filter_names_sources_not_actions(client, people):
    person = await signed_in(client, people)
    await accounts.update_profile(person.user_id, "Kim", "de", "UTC")

    page = await client.get("/articles")

    # Not "Importieren": that is the import page's button ("import them"), not where it came from.
    assert re.search(r'<option value="import"\s*>Sammelimport</option>', page.text)


async def test_each_rows_buttons_name_their_article_to_a_screen_reader(client, people):
    person = await signed_in(client, people)
    kept = await save(person.workspace_id, title="Trams return")
    binned = await save(person.workspace_id, title="Buses leave")
    await delete_article(person.workspace_id, binned, actor_user_id=None)

    for page in (await client.get("/articles"), await client.get("/articles?deleted=1")):
        buttons = re.findall(r'<button type="submit" form="article-actions"[^>]*>', page.text)
        assert buttons
        for button in buttons:
            described = re.search(r'aria-describedby="([^"]+)"', button).group(1)
            title = re.search(
                rf'<a class="article-title"[^>]* id="{described}">(.*?)</a>', page.text
            )
            assert re.search(r">(Trams return|Buses leave)<", title.group(1)), button
    assert f'id="article-{kept}-title"' in (await client.get("/articles")).text


async def test_load_more_pages_through_everything_once(client, people):
    person = await signed_in(client, people)
    made = [await save(person.workspace_id, title=f"Story {i}") for i in range(30)]

    first = await client.get("/articles")
    link = next_link(first.text)
    # New arrivals between the two pages neither repeat nor hide anything.
    await save(person.workspace_id, title="Late arrival")
    second = await client.get(link)

    assert len(ids_in(first.text)) == 25
    assert ids_in(first.text) + ids_in(second.text) == list(reversed(made))
    assert next_link(second.text) is None


async def test_search_results_page_by_rank(client, people):
    person = await signed_in(client, people)
    ws = person.workspace_id
    made = [await save(ws, title=f"Budget item {i}", text="budget " * (i + 1)) for i in range(30)]

    first = await client.get("/articles", params={"q": "budget"})
    link = next_link(first.text)
    assert parse_qs(urlsplit(link).query)["q"] == ["budget"]
    second = await client.get(link)

    seen = ids_in(first.text) + ids_in(second.text)
    assert sorted(seen) == sorted(made)
    assert len(set(seen)) == 30
    assert seen[0] == made[-1]  # the most mentions rank first


@pytest.mark.parametrize(
    ("params", "message", "kept"),
    [
        ({"topic": "abc"}, "Choose a topic from the list.", None),
        ({"state": "bogus"}, "Unknown analysis state.", None),
        ({"source": "<script>"}, "Unknown source.", None),
        ({"q": "tram", "cursor": "not-a-cursor"}, "This page link is broken.", "tram"),
        ({"q": "x" * 301}, "at most 300 characters", "x" * 301),
    ],
)
async def test_bad_filter_values_are_a_400_with_the_form_kept(
    client, people, params, message, kept
):
    await signed_in(client, people)

    page = await client.get("/articles", params=params)

    assert page.status_code == 400
    assert message in page.text
    if kept:
        assert f'value="{kept}"' in page.text


@pytest.mark.parametrize(
    "q", ["!!!", "a & | ! <> :*", "'", '"unclosed', "-", "or", "\x00nul", "😀"]
)
async def test_odd_searches_never_fail(client, people, q):
    person = await signed_in(client, people)
    await save(person.workspace_id, title="Anything")

    page = await client.get("/articles", params={"q": q})

    assert page.status_code == 200


@pytest.mark.parametrize(
    "url",
    ["/articles/99999999999999999999", "/articles/0", "/articles/99999999999999999999/stream"],
)
async def test_ids_beyond_any_article_are_not_found(client, people, url):
    await signed_in(client, people)

    assert (await client.get(url)).status_code == 404
    assert (await post_form(client, "/articles/99999999999999999999/delete")).status_code == 404


async def test_a_forged_cursor_is_a_400(client, people):
    await signed_in(client, people)
    forged = "W251bGwsMCw5OTk5OTk5OTk5OTk5OTk5OTk5OV0"  # [null,0,99999999999999999999]

    page = await client.get("/articles", params={"cursor": forged})

    assert page.status_code == 400
    assert "This page link is broken." in page.text


async def test_a_cursor_of_another_search_is_refused(client, people):
    person = await signed_in(client, people)
    for i in range(30):
        await save(person.workspace_id, title=f"Story {i}")
    link = next_link((await client.get("/articles")).text)
    cursor = parse_qs(urlsplit(link).query)["cursor"][0]

    page = await client.get("/articles", params={"q": "story", "cursor": cursor})

    assert page.status_code == 400
    assert "another search" in page.text


async def test_a_quote_in_the_search_cannot_break_out_of_the_stream_expression(client, people):
    await signed_in(client, people)

    page = await client.get("/articles", params={"q": "x'); alert(1); ('"})

    init = unescape(re.search(r'data-init="([^"]+)"', page.text).group(1))
    url = re.match(r"@get\('([^']*)', \{retry: 'always'", init).group(1)
    assert url == "/articles/stream?q=x%27%29%3B+alert%281%29%3B+%28%27"


# Delete and restore ------------------------------------------------------------------


async def test_delete_and_restore_through_the_library_and_the_trash(client, people):
    person = await signed_in(client, people, "editor")
    article_id = await save(person.workspace_id, title="Old news")

    deleted = await post_form(client, f"/articles/{article_id}/delete", {"next": "/articles"})
    assert deleted.status_code == 303
    assert deleted.headers["location"] == f"/articles?undo={article_id}"
    assert ids_in((await client.get("/articles")).text) == []
    trash = await client.get("/articles?deleted=1")
    assert ids_in(trash.text) == [article_id]
    assert "Restore" in trash.text

    restored = await post_form(
        client, f"/articles/{article_id}/restore", {"next": "/articles?deleted=1"}
    )
    assert restored.status_code == 303
    assert ids_in((await client.get("/articles")).text) == [article_id]
    assert ids_in((await client.get("/articles?deleted=1")).text) == []
    kinds = [r["kind"] for r in await db.fetch("SELECT kind FROM events ORDER BY id")]
    assert kinds[-2:] == ["article_deleted", "article_restored"]


async def test_a_redirect_after_delete_stays_on_this_site(client, people):
    person = await signed_in(client, people)
    article_id = await save(person.workspace_id)

    response = await post_form(
        client, f"/articles/{article_id}/delete", {"next": "https://evil.example/"}
    )

    assert response.headers["location"] == f"/articles?undo={article_id}"


async def test_a_viewer_reads_but_cannot_delete(client, people):
    person = await signed_in(client, people, "viewer")
    article_id = await save(person.workspace_id)

    page = await client.get("/articles")
    assert ids_in(page.text) == [article_id]
    assert "/delete" not in page.text
    response = await post_form(client, f"/articles/{article_id}/delete")
    assert response.status_code == 403
    assert await db.fetchval("SELECT deleted_at FROM articles WHERE id = $1", article_id) is None


# The reader --------------------------------------------------------------------------


async def test_the_reader_shows_the_article(client, people):
    person = await signed_in(client, people)
    article_id = await save(
        person.workspace_id,
        url="https://news.example/trams?utm_source=x",
        title="Trams return",
        byline="Kim Reporter",
        site_name="City News",
        published_at=datetime(2024, 5, 6, 7, 8, tzinfo=UTC),
        warnings=(Warning.PAYWALL,),
        lead_image="https://img.example/tram.jpg",
    )

    page = await client.get(f"/articles/{article_id}")

    assert page.status_code == 200
    text = page.text
    assert "Trams return" in text
    assert "Kim Reporter" in text
    assert "City News" in text
    assert "May 6, 2024" in text  # Babel, in the reader's language
    assert "1 minute read" in text
    assert "night buses" in text  # the body, through the renderer
    assert '<div class="rich" data-ignore>' in text
    original = re.search(r'<a class="original" ([^>]+)>', text).group(1)
    assert 'href="https://news.example/trams"' in original
    assert 'rel="nofollow noopener noreferrer ugc"' in original
    assert 'referrerpolicy="no-referrer"' in original
    assert "behind a paywall" in text
    assert re.search(r'<img src="/media/[^"]+"', text)  # the lead image, only by proxy
    assert "img.example" not in re.search(
        r'<figure class="lead-image">.*?</figure>', text, re.S
    ).group(0)
    assert 'id="analysis-panel"' in text
    assert "Waiting for analysis" in text
    assert f"@get(&#39;/articles/{article_id}/stream" in text


async def test_the_reader_shows_a_lead_image_the_text_holds_once(client, people):
    person = await signed_in(client, people)
    image = "https://img.example/tram.jpg"
    event = article_event(lead_image=image)
    body = f'<p>Trams return.</p><figure><img src="{image}" alt="A tram"></figure><p>{ENGLISH}</p>'
    outcome = await process_scraped_article(
        person.workspace_id, replace(event, content=from_html(body))
    )

    page = await client.get(f"/articles/{outcome.article_id}")

    assert page.text.count("<img ") == 1  # the text's figure, with its alt
    assert 'alt="A tram"' in page.text
    assert 'class="lead-image"' not in page.text


async def test_the_reader_shows_arxiv_authors_pdf_and_sections(client, people):
    person = await signed_in(client, people)
    outcome = await process_scraped_article(person.workspace_id, arxiv_event())

    page = await client.get(f"/articles/{outcome.article_id}")

    assert "Ada Lovelace" in page.text
    assert "Alan Turing" in page.text
    assert 'href="https://arxiv.org/pdf/2401.01234v2"' in page.text
    headings = re.findall(
        r'<section class="arxiv-section">\s*<h2><span data-ignore>([^<]+)<', page.text
    )
    assert headings == ["Introduction", "Method", "Results"]
    assert "Conformers are sampled with a diffusion model." in page.text


async def test_the_reader_shows_a_completed_analysis(client, people, settings):
    person = await signed_in(client, people)
    article_id = await save(person.workspace_id, text=ENGLISH, title="Transport budget")
    await run_analysis(person.workspace_id, article_id, settings)

    page = await client.get(f"/articles/{article_id}")

    panel = re.search(r'<section id="analysis-panel".*?</section>', page.text, re.S).group(0)
    assert "analysis-completed" in panel
    assert "budget" in panel.lower()
    assert "local-v1" in panel
    assert 'class="analysis-language" data-language="en">English<' in panel


async def test_hostile_titles_and_fields_are_rendered_inert(client, people):
    person = await signed_in(client, people)
    hostile = 'Hostile <img src=x onerror="alert(1)"><a data-on:click="alert(2)">x</a>'
    outcome = await process_scraped_article(
        person.workspace_id,
        arxiv_event(
            title=hostile,
            byline=hostile,
            site_name=hostile,
            arxiv=ArxivData(
                arxiv_id=hostile,
                authors=(hostile,),
                sections=(ArxivSection(hostile, hostile),),
            ),
        ),
    )
    await db.fetchval(
        "UPDATE analyses SET status = 'completed', summary = $1, keywords = $2::jsonb "
        "WHERE article_id = $3 RETURNING id",
        hostile,
        '["' + hostile.replace('"', '\\"') + '"]',
        outcome.article_id,
    )

    for url in ("/articles", f"/articles/{outcome.article_id}", "/articles?q=hostile"):
        page = await client.get(url)
        assert page.status_code == 200
        assert "<img src=x" not in page.text
        assert 'onerror="alert(1)"' not in page.text
        assert 'data-on:click="alert(2)"' not in page.text
        assert "&lt;img src=x onerror=" in page.text


async def test_another_workspaces_article_is_not_found_anywhere(client, people):
    person = await signed_in(client, people, "owner")
    other, _owner = await people.workspace("Elsewhere")
    theirs = await save(other, title="Secret plans")

    for url in (f"/articles/{theirs}", f"/articles/{theirs}/stream"):
        response = await client.get(url)
        assert response.status_code == 404
        assert "Secret plans" not in response.text
    assert (await post_form(client, f"/articles/{theirs}/delete")).status_code == 404
    assert "Secret plans" not in (await client.get("/articles?q=secret")).text
    token = await accounts.issue_api_token(person.workspace_id, person.user_id, "bot")
    api = await client.get(
        f"/api/v1/articles/{theirs}", headers={"Authorization": f"Bearer {token}"}
    )
    assert api.status_code == 404
    assert (
        await client.post(
            f"/api/v1/articles/{theirs}/delete", headers={"Authorization": f"Bearer {token}"}
        )
    ).status_code == 404
    assert await db.fetchval("SELECT deleted_at FROM articles WHERE id = $1", theirs) is None


async def test_the_reader_panel_fills_in_live_when_analysis_completes(
    client, people, settings, web_app
):
    person = await signed_in(client, people)
    article_id = await save(person.workspace_id, text=ENGLISH, title="Transport budget")

    async with LiveStream(web_app, client, f"/articles/{article_id}/stream") as stream:
        first = await stream.until("Waiting for analysis")
        assert "analysis-completed" not in first
        await run_analysis(person.workspace_id, article_id, settings)
        sent = await stream.until("analysis-completed")

    assert "datastar-patch-elements" in sent
    assert 'id="analysis-panel"' in sent
    assert "local-v1" in sent


async def test_the_library_list_updates_live_when_an_article_arrives(client, people, web_app):
    person = await signed_in(client, people)
    await save(person.workspace_id, title="Already here")

    async with LiveStream(web_app, client, "/articles/stream") as stream:
        await stream.until("Already here")
        await save(person.workspace_id, title="Fresh arrival")
        sent = await stream.until("Fresh arrival")

    assert 'id="library-list"' in sent


async def test_the_library_stream_keeps_the_search(client, people, web_app):
    person = await signed_in(client, people)
    await save(person.workspace_id, title="Tram news")

    async with LiveStream(web_app, client, "/articles/stream?q=tram") as stream:
        await stream.until("Tram news")
        await save(person.workspace_id, title="Weather news", text="Sunny all week.")
        await save(person.workspace_id, title="Tram delays")
        sent = await stream.until("Tram delays")

    assert "Weather news" not in sent


# The API -----------------------------------------------------------------------------


async def api_client(client, people, role: str = "editor"):
    person = await people.member(role)
    token = await accounts.issue_api_token(person.workspace_id, person.user_id, "bot")
    return person, {"Authorization": f"Bearer {token}"}


async def test_the_api_lists_searches_and_pages(client, people):
    person, auth = await api_client(client, people)
    made = [await save(person.workspace_id, title=f"Budget {i}") for i in range(5)]

    first = await client.get("/api/v1/articles", params={"limit": "3"}, headers=auth)
    body = first.json()
    second = await client.get(
        "/api/v1/articles", params={"limit": "3", "cursor": body["next_cursor"]}, headers=auth
    )
    search = await client.get("/api/v1/articles", params={"q": "budget"}, headers=auth)

    assert first.status_code == 200
    assert [i["id"] for i in body["items"]] + [i["id"] for i in second.json()["items"]] == list(
        reversed(made)
    )
    assert second.json()["next_cursor"] is None
    hit = search.json()["items"][0]
    assert hit["snippet"]["type"] == "document"
    assert hit["analysis_status"] == "pending"


async def test_the_api_returns_an_article_with_its_tree_and_text(client, people):
    person, auth = await api_client(client, people)
    outcome = await process_scraped_article(person.workspace_id, arxiv_event())

    response = await client.get(f"/api/v1/articles/{outcome.article_id}", headers=auth)

    body = response.json()
    assert response.status_code == 200
    assert body["content"]["type"] == "document"
    assert body["content"]["children"][0]["type"] == "paragraph"
    assert body["text"].startswith("We present equivariant attention")
    assert body["arxiv"]["authors"] == ["Ada Lovelace", "Alan Turing"]
    assert [s["heading"] for s in body["arxiv"]["sections"]] == [
        "Introduction",
        "Method",
        "Results",
    ]
    assert body["analysis"]["status"] == "pending"
    assert body["source"] == "arxiv"


async def test_the_api_deletes_and_restores_with_articles_import(client, people):
    person, auth = await api_client(client, people, "editor")
    article_id = await save(person.workspace_id)

    deleted = await client.post(f"/api/v1/articles/{article_id}/delete", headers=auth)
    listed = await client.get("/api/v1/articles", params={"deleted": "1"}, headers=auth)
    restored = await client.post(f"/api/v1/articles/{article_id}/restore", headers=auth)

    assert deleted.json() == {"id": article_id, "deleted": True, "changed": True}
    assert [i["id"] for i in listed.json()["items"]] == [article_id]
    assert restored.json() == {"id": article_id, "deleted": False, "changed": True}
    viewer, viewer_auth = await api_client(client, people, "viewer")
    theirs = await save(viewer.workspace_id)
    refused = await client.post(f"/api/v1/articles/{theirs}/delete", headers=viewer_auth)
    assert refused.status_code == 403


async def test_the_api_says_what_is_wrong_with_a_filter(client, people):
    _person, auth = await api_client(client, people)

    response = await client.get("/api/v1/articles", params={"limit": "500"}, headers=auth)

    assert response.status_code == 400
    assert "limit" in response.json()["detail"]


async def test_deleting_an_article_twice_is_harmless(client, people):
    person = await signed_in(client, people)
    article_id = await save(person.workspace_id)
    await delete_article(person.workspace_id, article_id, actor_user_id=None)

    response = await post_form(client, f"/articles/{article_id}/delete")

    assert response.status_code == 303


async def test_every_whole_state_of_the_library_asks_clients_to_read_their_loaded_rows_again(
    client, people, web_app
):
    person = await signed_in(client, people)
    for i in range(25):
        await save(person.workspace_id, title=f"Story {i}")
    held = re.compile(r'id="library-held" hidden data-init="[^"]*/articles/held\?render=([\w-]+)')

    async with LiveStream(web_app, client, "/articles/stream") as stream:
        first = held.findall(await stream.until("Story 0"))
        # A 26th article: "Load more" appears, so the whole list goes out again.
        await save(person.workspace_id, title="One more")
        again = held.findall(await stream.until("One more"))

    assert len(first) == 1
    assert len(again) == 2
    assert again[1] != first[0]  # a changed trigger runs again in the browser


def test_a_restarted_or_another_web_server_renders_held_triggers_of_its_own():
    # A reconnect may land on a new process: a trigger equal to the one its client holds
    # would not run, and the rows pushed past its first page meanwhile would stay lost.
    first_render = "from app.articles.controllers import _render_token; print(_render_token())"
    one, other = (
        subprocess.run(
            [sys.executable, "-c", first_render], check=True, capture_output=True, text=True
        ).stdout
        for _ in range(2)
    )
    assert one.strip()
    assert one != other


async def test_rows_below_the_first_page_are_sent_as_they_change_and_when_they_leave(
    client, people, settings, web_app
):
    person = await signed_in(client, people)
    below = await save(person.workspace_id, title="Loaded story", text=ENGLISH)
    for i in range(2):
        await save(person.workspace_id, title=f"Story {i}")
    changed = re.compile(r'<li class="row article-row" id="changed-article-(\d+)"')

    async with LiveStream(web_app, client, "/articles/stream?limit=2") as stream:
        state = await stream.until("Story 1")
        assert "Loaded story" not in state  # below the first page: a client's own, loaded
        await run_analysis(person.workspace_id, below, settings)
        sent = await stream.until(f'id="changed-article-{below}"')
        old = await save(
            person.workspace_id, title="Old", published_at=datetime(2001, 1, 1, tzinfo=UTC)
        )
        later = await stream.until(f'id="changed-article-{old}"')
        await delete_article(person.workspace_id, below, actor_user_id=None)  # another device
        left = await stream.until(f'id="changed-article-{below}" data-gone')

    into_changes = sent[sent.index('id="library-changes"') :]
    assert 'class="state state-completed"' in into_changes
    assert "Delete</button>" in into_changes  # the shared render: the role's buttons
    assert changed.findall(later).count(str(below)) == 1  # sent once, not with the next change
    assert "Loaded story" not in left[len(later) :]  # gone: an id, no row


async def test_too_many_rows_changed_below_the_first_page_make_clients_read_them_again(
    client, people, web_app
):
    person = await signed_in(client, people)
    for i in range(MAX_CHANGED_ROWS + 2):
        await save(person.workspace_id, title=f"Story {i}")
    held = re.compile(r'<span id="library-held" hidden data-init="[^"]*render=([\w-]+)')

    async with LiveStream(web_app, client, "/articles/stream?limit=1") as stream:
        first = held.findall(await stream.until("library-held"))
        # One statement rewrites every row: more changed below the first page than patches carry.
        await db.fetch(
            "UPDATE articles SET title = title || ' (updated)', updated_at = now() "
            "WHERE workspace_id = $1 RETURNING id",
            person.workspace_id,
        )
        await publish(person.workspace_id, LIBRARY_TOPIC)
        sent = await stream.until("(updated)")  # the first page's row, in the same patch

    again = held.findall(sent)
    assert len(again) == 2
    assert again[1] != first[0]  # a new trigger: clients that loaded more read them again
    assert sent.count('id="library-list"') == 1  # the first state only: no whole state
    assert 'id="changed-article-' not in sent  # not one patch per row
