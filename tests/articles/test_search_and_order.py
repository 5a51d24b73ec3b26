"""Search that finds what people type, and the library's orders with stable paging."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from urllib.parse import parse_qs, urlsplit

import pytest

from app.articles import queries
from app.articles.listing import parse_filter
from app.core import db
from tests.articles.test_pages import ids_in, save, signed_in
from tests.plans import per_row_conditions, plan_of, sort_keys

GERMAN = (
    "Die Stadt Zürich hat am Dienstag neue Häuser für die Familien der Altstadt "
    "gebaut. Der Stadtrat sagt, dass die Wohnungen bis zum Sommer fertig sein "
    "werden und dass die Mieten nicht steigen. Die Bewohner sind mit dem Plan "
    "zufrieden, aber sie wollen auch mehr Parks und eine neue Schule in der Nähe."
)
ENGLISH = (
    "The councils were running studies of the flooded roads for the whole winter. "
    "They said that the results would be published in the spring and that the "
    "roads would be repaired by the summer. Residents of the valley have asked "
    "for new bridges and for better warnings when the river rises."
)


async def found(workspace_id: int, q: str, **params: str) -> list[int]:
    page = await queries.library(workspace_id, parse_filter({"q": q, **params}))
    return [row.id for row in page.items]


# Search -----------------------------------------------------------------------------


async def test_accents_are_folded_both_ways(client, people):
    person = await signed_in(client, people)
    ws = person.workspace_id
    german = await save(ws, title="Neue Häuser in Zürich", text=GERMAN, language="de")
    english = await save(ws, title="A trip to Zurich", text=ENGLISH, language="en")

    assert set(await found(ws, "zurich")) == {german, english}
    assert set(await found(ws, "Zürich")) == {german, english}
    assert await found(ws, "zuerich") == []  # folding, not guessing


async def test_words_are_stemmed_in_the_articles_own_language(client, people):
    person = await signed_in(client, people)
    ws = person.workspace_id
    english = await save(ws, title="Flood report", text=ENGLISH, language="en")
    german = await save(ws, title="Wohnungsbau", text=GERMAN, language="de")

    assert await found(ws, "run study") == [english]  # running, studies
    assert await found(ws, "haus") == [german]  # Häuser
    assert await found(ws, "wohnung") == [german]  # Wohnungen


async def test_a_search_typed_under_any_ui_language_reads_each_article_in_its_own(client, people):
    # The query is parsed per article in the article's language: a German
    # plural finds the German article, an English one the English article,
    # whoever types them and whatever their interface speaks.
    person = await signed_in(client, people)
    ws = person.workspace_id
    english = await save(ws, title="Flood report", text=ENGLISH, language="en")
    german = await save(ws, title="Wohnungsbau", text=GERMAN, language="de")
    await db.fetchval("UPDATE users SET locale = 'de' WHERE email = $1 RETURNING 1", person.email)

    page = await client.get("/articles", params={"q": "Häuser"})
    assert ids_in(page.text) == [german]
    page = await client.get("/articles", params={"q": "roads studied"})
    assert ids_in(page.text) == [english]


async def test_a_language_without_a_stemmer_is_read_as_simple_words_with_accents_folded(
    client, people
):
    person = await signed_in(client, people)
    ws = person.workspace_id
    polish = await save(
        ws, title="Żółw w parku", text="Żółw mieszka w parku miejskim.", language="pl"
    )

    assert await found(ws, "zolw") == [polish]
    assert await found(ws, "parku") == [polish]
    assert await found(ws, "park") == []  # no stemming without a dictionary


CLIMATE = (
    "Das Klima in den Alpen wird wärmer, und die Gemeinden wollen nun mit den Bauern über "
    "neue Regeln für das Wasser sprechen, die ab dem Sommer gelten sollen."
)
CLIMATE_CHANGE = (
    "Der Klimawandel trifft die Bauern in der Region, und die Regierung will nun mit den "
    "Gemeinden über neue Hilfen sprechen, die ab dem Sommer für alle Höfe gelten sollen."
)
RAILWAY = (
    "Die Eisenbahn fährt wieder, und die Pendler sind froh, dass sie nach den langen Wochen "
    "mit dem Bus nun wieder mit dem Zug zur Arbeit in die Stadt kommen."
)
PORTFOLIO = (
    "The fund said that its portfolio grew by a tenth this year, and that the managers "
    "would keep most of the money in bonds for the rest of the decade."
)


async def test_a_german_compound_is_found_by_its_first_word_the_word_itself_first(client, people):
    person = await signed_in(client, people)
    ws = person.workspace_id
    compound = await save(
        ws, title="Klimawandel und Landwirtschaft", text=CLIMATE_CHANGE, language="de"
    )
    word = await save(ws, title="Bericht aus den Alpen", text=CLIMATE, language="de")

    # The word as typed ranks above a compound, even one in a title.
    assert await found(ws, "Klima") == [word, compound]
    assert await found(ws, "Klimawandel") == [compound]


async def test_short_words_phrases_and_english_stay_whole(client, people):
    person = await signed_in(client, people)
    ws = person.workspace_id
    railway = await save(ws, title="Bahnverkehr", text=RAILWAY, language="de")
    compound = await save(ws, title="Landwirtschaft", text=CLIMATE_CHANGE, language="de")
    english = await save(ws, title="Annual report", text=PORTFOLIO, language="en")

    assert await found(ws, "Eisenbahn") == [railway]
    assert await found(ws, "Ei") == []  # two letters would begin thousands of words
    assert await found(ws, "an") == []
    assert await found(ws, '"Klima trifft"') == []  # a phrase is what was typed
    assert await found(ws, '"Klimawandel trifft"') == [compound]
    assert await found(ws, "port") == []  # English writes no closed compounds
    assert await found(ws, "portfolio") == [english]


async def test_a_search_reads_the_query_in_every_language_once_not_for_each_article(people):
    # The any-language query parses the words in ~30 configurations (~1 ms): evaluated for
    # every article a scan looked at, a common word took seconds in a library of thousands.
    ws, _owner = await people.workspace()
    for i in range(30):
        await save(ws, title=f"Flood report {i}", text=ENGLISH, language="en")

    plan = await plan_of(ws, lambda: found(ws, "flood roads"), "newsdesk_search_parses")

    assert not [c for c in per_row_conditions(plan) if "newsdesk_search_any" in c]
    assert len(await found(ws, "flood roads")) == 25  # and it still finds them


async def test_ranking_parses_the_query_once_and_reads_each_vector_once(client, people):
    """Ranking a common word costs per article holding it: the query parsed again for each
    one, or its stored vector fetched from TOAST for each use, was most of a search."""
    person = await signed_in(client, people)
    ws = person.workspace_id
    for i in range(30):
        await save(ws, title=f"Flood report {i}", text=ENGLISH, language="en")

    plan = await plan_of(ws, lambda: found(ws, "flood roads"), "newsdesk_search_parses")

    per_row = per_row_conditions(plan) + sort_keys(plan)
    assert [e for e in per_row if "ts_rank_cd" in e]  # the rank is among them
    assert not [e for e in per_row if "websearch_to_tsquery" in e]
    # The candidates' vectors come in one call (m0026), none is fetched per article, and
    # the rank reads the copy (`sq.vector`), not what the call answered (`v.vector`).
    assert "newsdesk_article_vectors" in str(plan)
    assert not [e for e in per_row if "newsdesk_article_vector" in e]
    assert [e for e in sort_keys(plan) if "sq.vector" in e]
    assert not [e for e in sort_keys(plan) if "v.vector" in e]
    assert len(await found(ws, "flood roads")) == 25


async def test_the_text_decides_the_language_when_the_page_declares_another(client, people):
    person = await signed_in(client, people)
    ws = person.workspace_id
    german = await save(ws, title="Wohnungsbau", text=GERMAN, language="en")

    assert await db.fetchval("SELECT language FROM articles WHERE id = $1", german) == "de"
    assert await found(ws, "haus") == [german]


async def test_a_phrase_does_not_run_from_the_title_into_the_text(client, people):
    person = await signed_in(client, people)
    ws = person.workspace_id
    article = await save(ws, title="Budget vote", text="Residents " + ENGLISH, language="en")

    assert await found(ws, '"vote residents"') == []
    assert await found(ws, '"budget vote"') == [article]
    assert await found(ws, '"residents of the valley"') == [article]


async def test_a_search_of_only_stop_words_finds_nothing_and_does_not_fail(client, people):
    person = await signed_in(client, people)
    await save(person.workspace_id, text=ENGLISH, language="en")
    page = await client.get("/articles", params={"q": "the of and"})
    assert page.status_code == 200


# Orders and paging --------------------------------------------------------------------


NOW = datetime.now(UTC)


async def dated(ws: int, title: str, published: datetime | None) -> int:
    return await save(ws, title=title, text=ENGLISH, published_at=published)


async def test_the_library_reads_newest_first_by_the_articles_own_date(client, people):
    person = await signed_in(client, people)
    ws = person.workspace_id
    # Saved in another order than published: the list follows the articles' own dates.
    yesterday = await dated(ws, "Yesterday's news", NOW - timedelta(days=1))
    last_year = await dated(ws, "Old news", NOW - timedelta(days=365))
    undated = await dated(ws, "No date", None)  # saved now: its own date is now
    future = await dated(ws, "Broken feed date", NOW + timedelta(days=30))  # not on top forever

    newest = ids_in((await client.get("/articles")).text)
    oldest = ids_in((await client.get("/articles", params={"sort": "oldest"})).text)
    saved = ids_in((await client.get("/articles", params={"sort": "saved"})).text)

    assert newest == [future, undated, yesterday, last_year]
    assert oldest == [last_year, yesterday, undated, future]
    assert saved == [future, undated, last_year, yesterday]


@pytest.mark.parametrize("sort", ["newest", "oldest", "saved"])
async def test_keyset_paging_is_stable_under_each_order(client, people, sort):
    person = await signed_in(client, people)
    ws = person.workspace_id
    # Equal dates on purpose: the id breaks ties, so nothing repeats or hides.
    days = [3, 1, None, 3, 7, None, 2, 1, 3, 5, 0, 2]
    made = [
        await dated(ws, f"Story {i}", None if d is None else NOW - timedelta(days=d))
        for i, d in enumerate(days)
    ]
    everything = await queries.library(ws, parse_filter({"sort": sort, "limit": "100"}))

    seen: list[int] = []
    params = {"sort": sort, "limit": "5"}
    while True:
        page = await queries.library(ws, parse_filter(params))
        seen += [row.id for row in page.items]
        await dated(ws, "Arrives while paging", NOW - timedelta(days=2))
        if page.next_cursor is None:
            break
        params = {**params, "cursor": page.next_cursor}

    # Arrivals may show up where their date puts them; what was there is seen once, in order.
    assert len(seen) == len(set(seen))
    assert [i for i in seen if i in made] == [row.id for row in everything.items]
    assert sorted(i for i in seen if i in made) == sorted(made)


async def test_a_search_can_be_ordered_by_date_and_paged(client, people):
    person = await signed_in(client, people)
    ws = person.workspace_id
    made = [
        await dated(ws, f"Budget {i}", NOW - timedelta(days=i)) for i in range(7)
    ]  # made[0] is the newest
    first = await queries.library(ws, parse_filter({"q": "budget", "sort": "oldest", "limit": "4"}))
    second = await queries.library(
        ws,
        parse_filter(
            {"q": "budget", "sort": "oldest", "limit": "4", "cursor": first.next_cursor or ""}
        ),
    )
    assert [r.id for r in first.items] + [r.id for r in second.items] == list(reversed(made))


async def test_a_cursor_of_another_order_is_refused(client, people):
    person = await signed_in(client, people)
    ws = person.workspace_id
    for i in range(3):
        await dated(ws, f"Story {i}", None)
    page = await queries.library(ws, parse_filter({"sort": "oldest", "limit": "1"}))

    answer = await client.get("/articles", params={"sort": "saved", "cursor": page.next_cursor})
    assert answer.status_code == 400
    assert "another search" in answer.text


async def test_an_unknown_order_is_a_400_with_the_form_kept(client, people):
    await signed_in(client, people)
    answer = await client.get("/articles", params={"sort": "sideways", "q": "tram"})
    assert answer.status_code == 400
    assert "Unknown order." in answer.text
    assert 'value="tram"' in answer.text


async def test_the_order_control_offers_best_match_only_for_a_search(client, people):
    await signed_in(client, people)
    plain = (await client.get("/articles")).text
    search = (await client.get("/articles", params={"q": "tram"})).text
    assert "Best match" not in plain
    assert "Recently saved" in plain
    assert "Best match" in search


async def test_load_more_answers_with_rows_to_append_and_the_next_link(client, people):
    person = await signed_in(client, people)
    ws = person.workspace_id
    made = [await dated(ws, f"Story {i}", NOW - timedelta(days=i)) for i in range(7)]
    first = await queries.library(ws, parse_filter({"limit": "3"}))

    answer = await client.get(
        "/articles/more",
        params={"limit": "3", "cursor": first.next_cursor},
        headers={"datastar-request": "true"},
    )

    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("text/event-stream")
    events = answer.text.split("\n\n")
    # Below the first page, in the list the stream's whole state leaves alone.
    rows = next(e for e in events if "selector #library-loaded" in e)
    assert "mode append" in rows
    assert [int(i) for i in re.findall(r'id="article-(\d+)"', rows)] == made[3:6]
    # The next "Load more" goes on from this client's own cursor, not the first page's.
    signals = next(e for e in events if "datastar-patch-signals" in e)
    cursor = re.search(r'"_libraryMore":\s*"([^"]+)"', signals)
    assert cursor is not None
    assert cursor.group(1).startswith("/articles/more?")
    assert '"_libraryEnd": false' in signals.replace(":false", ": false")

    last = await client.get(
        "/articles/more",
        params={"limit": "3", "cursor": parse_qs(urlsplit(cursor.group(1)).query)["cursor"][0]},
        headers={"datastar-request": "true"},
    )
    assert re.findall(r'id="article-(\d+)"', last.text) == [str(made[6])]
    assert re.search(r'"_libraryEnd":\s*true', last.text)  # the link goes
    # The rows' Delete submits the page's own form, which comes back to the list.
    assert 'form="article-actions" formaction="/articles/' in rows
    assert "_csrf_token" not in rows


async def _held(client, until: str, **params: str) -> tuple[list[int], str]:
    answer = await client.get(
        "/articles/held", params={"until": until, **params}, headers={"datastar-request": "true"}
    )
    assert answer.status_code == 200
    return [int(i) for i in re.findall(r'id="article-(\d+)"', answer.text)], answer.text


async def test_held_rows_are_read_again_from_the_first_page_end_to_where_load_more_reached(
    client, people
):
    person = await signed_in(client, people)
    ws = person.workspace_id
    made = [await dated(ws, f"Story {i}", NOW - timedelta(days=i)) for i in range(9)]
    first = await queries.library(ws, parse_filter({"limit": "3"}))
    loaded = await queries.library(ws, parse_filter({"limit": "3", "cursor": first.next_cursor}))
    assert loaded.next_cursor is not None
    # While the client was away two articles arrived and pushed two rows off its first page.
    for i in range(2):
        await dated(ws, f"New {i}", NOW + timedelta(hours=i))

    ids, sent = await _held(client, loaded.next_cursor, limit="3")

    # The first page is now New 1, New 0, Story 0: below it, everything up to the last
    # loaded row - the two pushed off rows included - replaces what the client held.
    assert ids == made[1:6]
    assert "mode replace" in sent
    assert "selector #library-loaded" in sent
    assert sent.count("event: ") == 1  # the list with its rows, one patch
    # "Load more" goes on where the client's own cursor is: where it was when the client
    # asked, or further if a "Load more" answered meanwhile (library.js keeps its rows).
    assert "datastar-patch-signals" not in sent
    assert "data-held-cut" not in sent

    to_end, sent = await _held(client, "end", limit="3")
    assert to_end == made[1:]
    assert "datastar-patch-signals" not in sent


async def test_held_rows_beyond_ten_pages_hand_over_to_load_more(client, people):
    person = await signed_in(client, people)
    ws = person.workspace_id
    made = [await dated(ws, f"Story {i}", NOW - timedelta(days=i)) for i in range(14)]

    ids, sent = await _held(client, "end", limit="1")

    assert ids == made[1:11]  # ten pages of one row
    assert "data-held-cut" in sent  # the client goes on from the last row read, not its own
    held = re.search(r'"_libraryHeld":\s*"([^"]+)"', sent)
    assert held is not None
    assert held.group(1) != "end"
    assert re.search(r'"_libraryEnd":\s*false', sent)
    more = await queries.library(ws, parse_filter({"limit": "5", "cursor": held.group(1)}))
    assert [row.id for row in more.items] == made[11:]


async def test_held_rows_of_a_search_end_at_the_last_loaded_hit(client, people):
    person = await signed_in(client, people)
    ws = person.workspace_id
    for i in range(5):
        await save(ws, title=f"Flood report {i}", text=ENGLISH)
    await save(ws, title="Weather", text="Sunny all week.")
    order = await found(ws, "flood")
    first = await queries.library(ws, parse_filter({"q": "flood", "limit": "1"}))
    loaded = await queries.library(
        ws, parse_filter({"q": "flood", "limit": "2", "cursor": first.next_cursor})
    )
    assert loaded.next_cursor is not None

    ids, _sent = await _held(client, loaded.next_cursor, q="flood", limit="1")

    assert ids == order[1:3]
