"""The UI is in the reader's language; content keeps its own (`lang` on articles and posts).

A German reader's page says lang="de", but an English article inside it says lang="en", so
screen readers, hyphenation and spelling read each part in its language. A post says the
language its platform tagged it with; one whose language is not known says lang=""
(unknown), never the reader's German. Search reads each in its own language too.
"""

import re

from app.articles.services import process_scraped_article
from tests.articles.helpers import ENGLISH, article_event
from tests.factories import signed_in_speaking
from tests.streams.test_api import api
from tests.wall.helpers import add_item, keyword_column


async def test_an_english_article_keeps_its_language_on_a_german_page(client, people):
    person = await signed_in_speaking(client, people, "de")
    outcome = await process_scraped_article(
        person.workspace_id, article_event(text=ENGLISH, title="Council approves", language="en")
    )
    reader = await client.get(f"/articles/{outcome.article_id}")
    assert '<html lang="de">' in reader.text
    assert re.search(r'<h1 class="reader-title" dir="auto" lang="en">', reader.text)
    assert '<div class="reader-body" lang="en">' in reader.text

    library = await client.get("/articles")
    assert '<html lang="de">' in library.text
    assert re.search(r'class="article-title" dir="auto" lang="en"', library.text)


async def test_a_post_of_unknown_language_is_not_marked_german(client, people):
    person = await signed_in_speaking(client, people, "de")
    column = await keyword_column(person.workspace_id, "Floods")
    await add_item(person.workspace_id, column, 1)
    wall = await client.get("/wall")
    assert '<html lang="de">' in wall.text
    assert '<div class="item-content" lang="">' in wall.text


async def test_a_post_carries_the_language_its_platform_named(client, people):
    person = await signed_in_speaking(client, people, "de")
    column = await keyword_column(person.workspace_id, "Floods")
    await add_item(person.workspace_id, column, 1, html="<p>Floods in Leeds</p>", lang="en")
    await add_item(person.workspace_id, column, 2, html="<p>大阪で洪水</p>", lang="ja")
    wall = await client.get("/wall")
    assert '<html lang="de">' in wall.text
    assert '<div class="item-content" lang="en">' in wall.text
    assert '<div class="item-content" lang="ja">' in wall.text


async def test_the_api_gives_each_posts_language(client, people):
    person, headers = await api(people)
    column = await keyword_column(person.workspace_id, "Floods")
    await add_item(person.workspace_id, column, 1, lang="pt-BR")
    await add_item(person.workspace_id, column, 2)
    page = await client.get(f"/api/v1/feeds/columns/{column}/items", headers=headers)
    assert [i["lang"] for i in page.json()["items"]] == [None, "pt-BR"]  # newest first


async def test_wall_search_stems_each_post_in_its_own_language(client, people):
    person = await signed_in_speaking(client, people, "de")
    ws = person.workspace_id
    column = await keyword_column(ws, "Floods")
    await add_item(ws, column, 1, html="<p>Die Überschwemmungen erreichen Köln</p>", lang="de")
    await add_item(ws, column, 2, html="<p>Flooding reaches the harbour</p>", lang="en")
    await add_item(ws, column, 3, html="<p>Überschwemmung ohne Sprache</p>")
    german = await client.get("/wall/search", params={"q": "Überschwemmung"})
    # the German post by its stem; the untagged one word for word
    assert "erreichen Köln" in german.text
    assert "ohne Sprache" in german.text
    english = await client.get("/wall/search", params={"q": "floods"})
    assert "reaches the harbour" in english.text  # English stems: floods ~ flooding
    assert "erreichen Köln" not in english.text
