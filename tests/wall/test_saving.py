""" "Save to library" on a wall post: the article it links through the ordinary import, or the
post itself from what the wall stored (no fetch), both through one-item import jobs."""

from __future__ import annotations

import dataclasses
import json
from datetime import UTC, datetime
from typing import Any

import pytest

from app.core import db, i18n
from app.safe_content import (
    Document,
    Link,
    Paragraph,
    Quote,
    Strong,
    Text,
    from_html,
    to_json,
    to_text,
)
from app.streams.types import ItemView
from app.wall import queries
from app.wall import services as wall
from app.wall.saving import SaveTarget, post_as_article, save_target
from tests.factories import post_form, signed_in_speaking
from tests.imports.helpers import item_rows, run_worker
from tests.wall.helpers import add_item, keyword_column

PERMALINK = "https://social.example/@alice/1"


def _post(doc: Document, provider: str = "mastodon", url: str = PERMALINK) -> ItemView:
    return ItemView(
        id=1, dedup_key="k" * 64, remote_id="1", provider=provider, connection_id=None,
        source_id=None, author_handle="alice@social.example", author_ref="", url=url,
        created_at=datetime(2026, 11, 30, 12, 0, tzinfo=UTC),
        fetched_at=datetime(2026, 11, 30, 12, 1, tzinfo=UTC),
        content=json.loads(to_json(doc)), plain_text="", media=[], metrics={},
    )  # fmt: skip


def _card(href: str) -> Quote:
    """A link card as the Bluesky provider stores it: the title linked, a description."""
    title = Paragraph(children=(Link(href=href, children=(Strong(children=(Text("T"),)),)),))
    return Quote(children=(title, Paragraph(children=(Text("about it"),))))


def test_a_post_saves_its_link_card_else_its_first_link_off_the_platform() -> None:
    text_link = from_html(
        '<p>Quoting <a href="https://social.example/@bob/7">a post</a>, see'
        ' <a href="https://news.example/a">this</a> and <a href="https://news.example/b">that</a></p>'
    )
    assert save_target(_post(text_link)) == SaveTarget("https://news.example/a", as_post=False)
    carded = Document(children=(*text_link.children, _card("https://news.example/card")))
    assert save_target(_post(carded)) == SaveTarget("https://news.example/card", as_post=False)


def test_a_post_without_a_link_off_the_platform_is_saved_as_itself() -> None:
    own = from_html('<p>See <a href="https://social.example/@bob/7">this post</a></p>')
    assert save_target(_post(own)) == SaveTarget(PERMALINK, as_post=True)
    assert save_target(_post(from_html("<p>Just words</p>"), url="")) is None  # nothing to save


def test_feed_entries_are_their_own_page_and_videos_are_themselves() -> None:
    linking = from_html('<p>Sponsor: <a href="https://shop.example/">shop</a></p>')
    entry = "https://blog.example/2026/levee"
    assert save_target(_post(linking, "rss", entry)) == SaveTarget(entry, as_post=False)
    video = "https://www.youtube.com/watch?v=abc"
    assert save_target(_post(linking, "youtube", video)) == SaveTarget(video, as_post=True)


def test_a_post_as_an_article_is_titled_by_its_author_and_first_words() -> None:
    post = _post(from_html("<p>x</p>"))
    long = dataclasses.replace(post, plain_text=" ".join(f"w{n}" for n in range(20)))
    article = post_as_article(long)
    assert article.title == "alice@social.example: w0 w1 w2 w3 w4 w5 w6 w7 w8 w9 w10 w11…"
    assert (article.url, article.byline, article.site_name) == (
        PERMALINK,
        "alice@social.example",
        "Mastodon",
    )
    assert article.published_at == post.created_at
    hostile = post_as_article(dataclasses.replace(post, plain_text="A" * 10_000))
    assert len(hostile.title) < 150


def test_a_post_of_pictures_alone_is_worded_by_their_alt_texts_and_who_posted_them() -> None:
    photos = [
        {"kind": "image", "url": "https://social.example/m/1.png", "alt": " The levee\n at dawn "},
        {"kind": "image", "url": "https://social.example/m/2.png", "alt": ""},
    ]
    article = post_as_article(dataclasses.replace(_post(Document()), media=photos))
    assert to_text(article.content).split("\n\n") == [
        "The levee at dawn",
        "Photo by alice@social.example on Mastodon",
    ]
    assert article.title == "alice@social.example: The levee at dawn"
    assert article.lead_image == "https://social.example/m/1.png"
    video = [{"kind": "video", "url": "https://social.example/m/3.mp4"}]
    clip = post_as_article(dataclasses.replace(_post(Document()), media=video))
    assert to_text(clip.content) == "Video by alice@social.example on Mastodon"
    assert clip.title == "alice@social.example"
    worded = post_as_article(dataclasses.replace(_post(from_html("<p>Words</p>")), media=photos))
    assert to_text(worded.content) == "Words"  # a post with words is left as it is


async def _save(ws: int, item: int, user_id: int, source: str) -> dict[str, Any]:
    """Save the item as the wall does, check the job's source, run the worker: its item row."""
    job = await wall.save_item(ws, item, actor_user_id=user_id)
    assert await db.fetchval("SELECT source FROM import_jobs WHERE id = $1", job) == source
    await run_worker()
    (row,) = await item_rows(job)
    return row


async def test_a_post_without_a_link_is_saved_from_what_the_wall_stored(services, people):
    editor = await people.member("editor")
    ws = editor.workspace_id
    column = await keyword_column(ws)
    item = await add_item(ws, column, 1, html="<p>The levee held overnight, the mayor says</p>")
    # social.example is not reachable from here: a fetch would fail the item.
    row = await _save(ws, item, editor.user_id, "wall")
    assert row["state"] == "saved", row["error"]
    article = await db.fetchrow("SELECT * FROM articles WHERE id = $1", row["article_id"])
    assert article["url"] == PERMALINK
    assert article["title"] == "alice@social.example: The levee held overnight, the mayor says"
    assert article["source"] == "wall"
    assert article["site_name"] == "Mastodon"
    assert "The levee held overnight" in article["text"]
    assert (await queries.saves(ws, [item]))[item].article_id == article["id"]

    # The same post seen again (another sighting, same permalink) is the same article.
    again = await add_item(ws, column, 2, html="<p>The levee held</p>", url=PERMALINK)
    row = await _save(ws, again, editor.user_id, "wall")
    assert (row["state"], row["article_id"]) == ("duplicate", article["id"])


async def test_a_post_of_pictures_alone_is_saved_not_refused_as_empty(services, people):
    editor = await people.member("editor")
    ws = editor.workspace_id
    photo = [{"kind": "image", "url": "https://social.example/m/1.png", "alt": "A flooded road"}]
    item = await add_item(ws, await keyword_column(ws), 1, html="<p> </p>", media=photo)
    row = await _save(ws, item, editor.user_id, "wall")
    assert row["state"] == "saved", row["error"]
    article = await db.fetchrow("SELECT * FROM articles WHERE id = $1", row["article_id"])
    assert "A flooded road" in article["text"]
    assert "Photo by alice@social.example on Mastodon" in article["text"]
    assert article["title"].startswith("alice@social.example: A flooded road")


@pytest.mark.parametrize(
    ("saver", "worker", "credit"),
    [
        ("de", "en", "Foto von alice@social.example auf Mastodon"),
        ("en", "de", "Photo by alice@social.example on Mastodon"),
    ],
)
async def test_a_picture_post_is_credited_in_the_savers_language_not_the_workers(
    client, people, saver, worker, credit
):
    person = await signed_in_speaking(client, people, saver)
    ws = person.workspace_id
    photo = [{"kind": "image", "url": "https://social.example/m/1.png", "alt": "A flooded road"}]
    item = await add_item(ws, await keyword_column(ws), 1, html="<p> </p>", media=photo)
    saved = await post_form(client, f"/wall/items/{item}/save")
    assert saved.status_code == 303
    with i18n.speaking(worker):  # the worker process speaks another language
        await run_worker()
    state, text = await db.fetchrow(
        "SELECT i.state, a.text FROM feed_item_saves s"
        " JOIN import_items i ON i.job_id = s.job_id LEFT JOIN articles a ON a.id = i.article_id"
        " WHERE s.item_id = $1",
        item,
    )
    assert state == "saved"
    assert text.split("\n\n")[-1] == credit


async def test_a_post_gone_from_the_wall_before_its_job_ran_says_so(services, people):
    editor = await people.member("editor")
    ws = editor.workspace_id
    item = await add_item(ws, await keyword_column(ws), 1)
    job = await wall.save_item(ws, item, actor_user_id=editor.user_id)
    await db.fetch("DELETE FROM feed_items WHERE id = $1", item)  # the daily sweep
    await run_worker()
    (row,) = await item_rows(job)
    assert row["state"] == "error"
    assert "no longer on the wall" in row["error"]


async def test_a_post_that_links_an_article_saves_the_article(services, people, site, site_egress):
    editor = await people.member("editor")
    ws = editor.workspace_id
    site.routes["/news/levee"] = site.page("article.html")
    link = site.base + "/news/levee"
    html = f'<p>Worth reading: <a href="{link}">the report</a></p>'
    item = await add_item(ws, await keyword_column(ws), 1, html=html)
    row = await _save(ws, item, editor.user_id, "manual")
    assert row["state"] == "saved", row["error"]
    article = await db.fetchrow("SELECT url, title FROM articles WHERE id = $1", row["article_id"])
    assert article["url"] == link
    assert article["title"] == "River towns vote to share one flood warning system"
