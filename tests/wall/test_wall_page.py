"""The wall page: columns side by side, their states as seed 003 section 3.5 words them,
items rendered only through safe_content, saving to the library, widths, actions."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from app.core import db, i18n
from app.imports.types import ItemState
from app.streams import polling, services
from app.streams.types import SourceState
from app.wall.labels import source_state_label
from tests.factories import csrf_of, post_form, sign_in, signed_in_speaking
from tests.wall.helpers import add_item, keyword_column


async def _signed_in(client, people, role: str = "editor"):  # type: ignore[no-untyped-def]
    person = await people.member(role)
    await sign_in(client, person.email)
    return person


async def test_signing_in_lands_on_the_wall(client, people):
    person = await people.member("viewer")
    await sign_in(client, person.email)
    home = await client.get("/", follow_redirects=False)
    assert home.headers["location"] == "/wall"
    page = await client.get("/wall")
    assert page.status_code == 200
    assert "No columns yet." in page.text
    assert 'data-init="@get(&#39;/wall/stream&#39;' in page.text


async def test_columns_show_side_by_side_with_their_items(client, people, statuses):
    person = await _signed_in(client, people)
    ws = person.workspace_id
    floods = await keyword_column(ws, "Floods")
    fires = await keyword_column(ws, "Fires", "#fires")
    await add_item(
        ws,
        floods,
        1,
        media=[{"kind": "image", "url": "https://social.example/media/1.png", "alt": "a river"}],
        metrics={"likes": 1200, "reposts": 4, "replies": 2},
    )
    await add_item(ws, fires, 2, html="<p>Smoke over the hills</p>")
    page = (await client.get("/wall")).text
    assert page.index("Floods") < page.index("Fires")  # in their order
    assert f'id="col-{floods}-items"' in page
    assert f'id="col-{fires}-items"' in page
    assert "Post 1 about the floods" in page
    assert "Smoke over the hills" in page
    assert "alice@social.example" in page
    # Time: the exact time on hover, machine-readable for the relative label.
    assert re.search(  # Babel's English puts a narrow no-break space before PM
        r'<time class="ago" datetime="2026-11-30T12:01:00\+00:00"'
        r' title="11/30/26, 12:01\sPM">Nov 30, 12:01\sPM</time>',
        page,
    )
    assert 'title="1,200 likes">♥ 1.2K<' in page
    assert "⟳ 4" in page
    assert 'href="https://social.example/@alice/1"' in page  # the original
    assert 'src="/media/' in page
    assert "social.example/media/1.png" not in page
    assert "Save to library" in page
    assert 'class="pf pf-mastodon"' in page  # the header's platform icon


async def test_third_party_markup_stays_inert(client, people):
    person = await _signed_in(client, people)
    column = await keyword_column(person.workspace_id)
    await add_item(
        person.workspace_id,
        column,
        1,
        html='<p data-on:load="alert(1)" onclick="alert(2)">Hi <script>alert(3)</script>'
        '<a href="javascript:alert(4)">x</a><img src=x onerror=alert(5)>'
        "<svg><script>alert(6)</script></svg></p>",
        url="javascript:alert(7)",
    )
    page = (await client.get("/wall")).text
    body = page[page.index('id="wall-columns"') : page.index('id="editor"')]
    assert "alert(" not in body
    assert "<script" not in body
    assert "data-ignore" in body  # Datastar evaluates nothing inside the content
    assert "Original" not in body  # a javascript: link is no link


async def test_sensitive_media_is_veiled_and_a_repost_names_its_reposter(client, people):
    person = await _signed_in(client, people)
    ws = person.workspace_id
    column = await keyword_column(ws)
    image = {"kind": "image", "url": "https://social.example/media/cw.png", "alt": "scene"}
    veiled = await add_item(ws, column, 1, media=[{**image, "sensitive": True}])
    plain = await add_item(ws, column, 2, media=[image], reposted_by="lena@mastodon.social")
    page = (await client.get("/wall")).text

    def row(item_id: int) -> str:
        start = page.index(f'id="i-{column}-{item_id}"')
        return page[start : page.index("</li>", start)]

    # Behind a click (a native <details>, no script): closed, so blurred, with its note.
    assert re.search(r'<details class="item-media veil">\s*<summary>', row(veiled))
    assert "Sensitive media: show" in row(veiled)
    assert 'src="/media/' in row(veiled)
    assert "<details" not in row(plain)
    assert 'src="/media/' in row(plain)
    # "Reposted by" from the item's field, above the post (not in its text).
    assert "Reposted by" in row(plain)
    assert "lena@mastodon.social" in row(plain)
    assert "Reposted by" not in row(veiled)


async def test_states_are_worded_as_the_seed_asks(client, people, statuses):
    person = await _signed_in(client, people)
    ws = person.workspace_id
    column = await keyword_column(ws)
    page = (await client.get("/wall")).text
    assert "Fetching the first posts…" in page  # pending
    await db.fetch(
        "UPDATE stream_sources SET state = 'ready', last_polled_at = now()"
        " WHERE id IN (SELECT source_id FROM stream_column_sources WHERE column_id = $1)",
        column,
    )
    page = (await client.get("/wall")).text
    assert re.search(
        r"No public posts match [^<]*floods[^<]* on Mastodon yet\.", page
    )  # per platform
    await add_item(ws, column, 1)
    await db.fetch(
        "UPDATE stream_sources SET state = 'error', last_error = 'social.example answered 502'"
        " WHERE id IN (SELECT source_id FROM stream_column_sources WHERE column_id = $1)",
        column,
    )
    page = (await client.get("/wall")).text
    assert "Not updating: showing the last data from" in page
    assert "social.example answered 502" in page
    await db.fetch(
        "UPDATE stream_sources SET state = 'budget_paused'"
        " WHERE id IN (SELECT source_id FROM stream_column_sources WHERE column_id = $1)",
        column,
    )
    page = (await client.get("/wall")).text
    assert "budget reached until" in page
    assert "Raise the cap in Settings" in page
    await db.fetch(
        "UPDATE stream_sources SET state = 'rate_limited'"
        " WHERE id IN (SELECT source_id FROM stream_column_sources WHERE column_id = $1)",
        column,
    )
    assert "asked us to slow down" in (await client.get("/wall")).text


async def test_a_failed_first_poll_says_retrying_and_why_not_waiting(client, people, statuses):
    """A source whose first poll failed stays `pending` until its third failure; the wall said
    "Waiting for the first poll" beside the red reason, and the header only "Fetching"."""
    person = await _signed_in(client, people)
    column = await keyword_column(person.workspace_id)
    await db.fetch(
        "UPDATE stream_sources SET last_error = 'social.example answered 502',"
        " consecutive_failures = 1"
        " WHERE id IN (SELECT source_id FROM stream_column_sources WHERE column_id = $1)",
        column,
    )
    page = (await client.get("/wall")).text
    head = page[page.index(f'id="col-{column}-head"') : page.index(f'id="col-{column}-items"')]
    assert "Fetching the first posts…" in head
    assert re.search(
        r'class="status-line"><span data-ignore>[^<]*social\.example answered 502', head
    )
    assert '<span class="source-state">Retrying</span>' in head
    assert "Waiting for the first poll" not in head


async def test_save_to_library_is_a_one_url_import_job_shown_on_the_item(client, people):
    person = await _signed_in(client, people)
    ws = person.workspace_id
    column = await keyword_column(ws)
    item = await add_item(ws, column, 1)
    response = await post_form(client, f"/wall/items/{item}/save")
    assert response.status_code == 303
    job = await db.fetchrow("SELECT id, total, source FROM import_jobs WHERE workspace_id = $1", ws)
    assert job["total"] == 1
    assert job["source"] == "wall"  # it links nothing: the post itself is saved
    url = await db.fetchval("SELECT url FROM import_items WHERE job_id = $1", job["id"])
    assert url == "https://social.example/@alice/1"
    assert "Saving…" in (await client.get("/wall")).text
    # Saving again follows the same job.
    await post_form(client, f"/wall/items/{item}/save")
    assert await db.fetchval("SELECT count(*) FROM import_jobs WHERE workspace_id = $1", ws) == 1
    await db.fetch(
        "UPDATE import_items SET state = $1 WHERE job_id = $2", ItemState.ERROR.value, job["id"]
    )
    page = (await client.get("/wall")).text
    assert "Could not save:" in page
    assert "Try again" in page


async def test_viewers_see_no_save_or_column_actions(client, people):
    editor = await people.member("editor")
    viewer = await people.member("viewer", editor.workspace_id)
    column = await keyword_column(editor.workspace_id)
    item = await add_item(editor.workspace_id, column, 1)
    await sign_in(client, viewer.email)
    page = (await client.get("/wall")).text
    assert "Save to library" not in page
    assert "+ Column" not in page
    assert (await post_form(client, f"/wall/items/{item}/save")).status_code == 403
    assert (await post_form(client, f"/wall/columns/{column}/delete")).status_code == 403


async def test_a_viewers_key_map_and_empty_search_offer_only_what_they_can_do(
    client, people, new_client
):
    editor = await people.member("editor")
    viewer = await people.member("viewer", editor.workspace_id)
    await keyword_column(editor.workspace_id)
    await sign_in(client, viewer.email)
    theirs = new_client()
    await sign_in(theirs, editor.email)
    keys = ("Save the post to the library", "Fetch new posts now", "New column")
    wall_as_viewer, wall_as_editor = [(await c.get("/wall")).text for c in (client, theirs)]
    assert [k for k in keys if k in wall_as_viewer] == []
    assert all(k in wall_as_editor for k in keys)
    hint = "Save the search as a column"
    assert "No stored post matches." in (await client.get("/wall/search?q=nothing")).text
    assert hint not in (await client.get("/wall/search?q=nothing")).text
    assert hint in (await theirs.get("/wall/search?q=nothing")).text


async def test_widths_are_each_members_own_and_bad_ones_refused(client, people, new_client):
    editor = await _signed_in(client, people)
    ws = editor.workspace_id
    column = await keyword_column(ws)
    other = await keyword_column(ws, "Fires", "#fires")
    viewer = await people.member("viewer", ws)
    theirs = new_client()
    await sign_in(theirs, viewer.email)

    # A viewer sizes their own wall; the editor's stays as it was.
    assert (await post_form(theirs, f"/wall/columns/{column}/width/wide")).status_code == 303
    assert (await post_form(client, f"/wall/columns/{other}/width/narrow")).status_code == 303
    viewer_css = (await theirs.get("/wall/widths.css")).text
    editor_css = (await client.get("/wall/widths.css")).text
    assert f"#col-{column} {{ flex-basis: var(--w-wide); --width: wide; }}" in viewer_css
    assert f"#col-{other}" not in viewer_css
    assert f"#col-{other} {{ flex-basis: var(--w-narrow); --width: narrow; }}" in editor_css
    assert f"#col-{column}" not in editor_css
    # Each page links its member's stylesheet by version; the shared columns carry no width.
    viewer_page = (await theirs.get("/wall")).text
    editor_page = (await client.get("/wall")).text
    link = re.compile(r'<link id="wall-widths" rel="stylesheet" href="/wall/widths.css\?v=(\w+)">')
    viewer_link, editor_link = link.search(viewer_page), link.search(editor_page)
    assert viewer_link
    assert editor_link
    assert viewer_link.group(1) != editor_link.group(1)
    assert f'<section class="column" id="col-{column}"' in viewer_page
    # Remembered per person (and back to medium takes the rule away).
    assert (await post_form(theirs, f"/wall/columns/{column}/width/medium")).status_code == 303
    assert f"#col-{column}" not in (await theirs.get("/wall/widths.css")).text
    rows = await db.fetch(
        "SELECT user_id, width FROM wall_column_widths WHERE column_id = $1", column
    )
    assert [(r["user_id"], r["width"]) for r in rows] == [(viewer.user_id, "medium")]

    bad = await post_form(theirs, f"/wall/columns/{column}/width/huge")
    assert bad.status_code == 422
    assert "Choose narrow, medium or wide." in bad.text
    elsewhere = await people.member("editor")
    foreign = await keyword_column(elsewhere.workspace_id)
    assert (await post_form(theirs, f"/wall/columns/{foreign}/width/wide")).status_code == 404


async def test_move_pause_refresh_and_remove_from_the_column_menu(client, people):
    person = await _signed_in(client, people)
    ws = person.workspace_id
    first = await keyword_column(ws, "First")
    second = await keyword_column(ws, "Second", "#second")
    await post_form(client, f"/wall/columns/{second}/move/left")
    page = (await client.get("/wall")).text
    assert page.index(f'id="col-{second}"') < page.index(f'id="col-{first}"')
    await post_form(client, "/wall/columns/reorder", {"ordered_ids": f"{first},{second}"})
    page = (await client.get("/wall")).text
    assert page.index(f'id="col-{first}"') < page.index(f'id="col-{second}"')
    await post_form(client, f"/wall/columns/{first}/pause")
    assert "Paused: resume to fetch new posts" in (await client.get("/wall")).text
    assert (await post_form(client, f"/wall/columns/{first}/refresh")).status_code == 303
    await post_form(client, f"/wall/columns/{first}/delete")
    page = (await client.get("/wall")).text
    assert f'id="col-{first}"' not in page
    assert f'id="col-{second}"' in page


async def test_load_older_pages_by_the_keyset_cursor(client, people):
    person = await _signed_in(client, people)
    ws = person.workspace_id
    column = await keyword_column(ws)
    for n in range(45):
        await add_item(ws, column, n)
    page = (await client.get("/wall")).text
    assert "Post 44 about" in page
    assert "Post 4 about" not in page
    cursor = re.search(rf"/wall/columns/{column}/older\?cursor=([\w-]+)", page).group(1)
    older = await client.get(
        f"/wall/columns/{column}/older?cursor={cursor}", headers={"datastar-request": "true"}
    )
    assert "mode append" in older.text
    assert "Post 4 about" in older.text
    assert "Post 0 about" in older.text
    assert "Post 5 about" not in older.text
    assert "Load older" not in older.text  # nothing further


async def test_search_over_stored_posts_and_save_it_as_a_column(client, people, statuses):
    person = await _signed_in(client, people)
    ws = person.workspace_id
    column = await keyword_column(ws)
    await add_item(ws, column, 1, html="<p>The levee held overnight</p>")
    await add_item(ws, column, 2, html="<p>Traffic news</p>")
    found = await client.get("/wall/search", params={"q": "levee"})
    assert found.status_code == 200
    assert "The levee held overnight" in found.text
    assert "Traffic news" not in found.text
    nothing = await client.get("/wall/search", params={"q": "volcano"})
    assert "No stored post matches." in nothing.text
    saved = await post_form(client, "/wall/search/save", {"q": "levee"})
    assert saved.status_code == 303
    row = await db.fetchrow(
        "SELECT type, title, spec->>'query' AS q FROM stream_columns"
        " WHERE workspace_id = $1 AND type = 'saved_search'",
        ws,
    )
    assert (row["title"], row["q"]) == ("levee", "levee")
    made = await db.fetchval("SELECT max(id) FROM stream_columns WHERE workspace_id = $1", ws)
    assert saved.headers["location"] == f"/wall#col-{made}"  # taken to it
    assert (await post_form(client, "/wall/search/save", {"q": ""})).status_code == 422


async def test_a_platform_waiting_for_a_budget_links_its_reason_to_settings(client, people):
    person = await _signed_in(client, people)
    await services.create_column(
        person.workspace_id,
        {"type": "keyword", "title": "Floods", "spec": {"query": "floods", "platforms": ["x"]}},
        actor_user_id=None,
    )
    page = (await client.get("/wall")).text
    assert re.search(r'<a href="/settings/platforms">X reads cost money[^<]*</a>', page)


async def _youtube_search(ws: int) -> int:
    """A YouTube keyword column's one source (its search needs the workspace's key)."""
    column = await services.create_column(
        ws,
        {"type": "keyword", "title": "Climate", "spec": {"query": "climate", "platforms": ["youtube"]}},
        actor_user_id=None,
    )  # fmt: skip
    return int(
        await db.fetchval(
            "SELECT source_id FROM stream_column_sources WHERE column_id = $1", column
        )
    )


@pytest.mark.parametrize(
    ("locale", "reason"),
    [
        ("en", "Add the workspace&#39;s YouTube key in Settings to read this."),
        (
            "de",
            "Hinterlegen Sie den YouTube-Schlüssel des Arbeitsbereichs in den Einstellungen, um",
        ),
    ],
)
async def test_a_source_missing_its_workspace_key_links_its_reason_to_the_key(
    client, people, locale, reason
):
    person = await signed_in_speaking(client, people, locale)
    ws = person.workspace_id
    await polling.poll_source(ws, await _youtube_search(ws), jitter=0)  # fails: no key
    page = (await client.get("/wall")).text
    assert re.search(
        rf'<span class="source-error"><a href="/settings/platforms#key-youtube">'
        rf"<span data-ignore>{reason}[^<]*</span></a></span>",
        page,
    )


async def test_other_source_errors_link_nowhere(client, people):
    person = await _signed_in(client, people)
    ws = person.workspace_id
    await keyword_column(ws)  # Mastodon: keyless
    await services.set_credential(ws, "youtube", "AIza-test-key")
    youtube = await _youtube_search(ws)
    await db.fetch(
        "UPDATE stream_sources SET state = 'error', last_error = $2 WHERE workspace_id = $1",
        ws, "The platform refused the key",
    )  # fmt: skip
    page = (await client.get("/wall")).text
    errors = re.findall(r'<span class="source-error">(.*?)</span></span>', page)
    assert errors == ["<span data-ignore>The platform refused the key"] * 2  # no link
    # The key removed: the search's error is now the missing key's, at its row in Settings.
    await services.remove_credential(ws, "youtube")
    await db.fetch("UPDATE stream_sources SET next_poll_at = now() WHERE id = $1", youtube)
    await polling.poll_source(ws, youtube, jitter=0)
    page = (await client.get("/wall")).text
    assert page.count('<a href="/settings/platforms#key-youtube">') == 1


@pytest.mark.parametrize("state", list(SourceState))
def test_every_source_state_reads_in_german(state):
    """A column's source list said "Failing", "Rate-limited", "Budget reached" in German."""
    with i18n.speaking("de"):
        german = source_state_label(state)
    assert german != source_state_label(state)


async def test_a_viewer_opening_the_wall_first_does_not_become_its_columns_creator(
    client, people, statuses
):
    """The home column of a connected account is seeded lazily, on the first listing; it is
    the connecting person's column, whoever lists first."""
    owner = await people.member("owner")
    viewer = await people.member("viewer", owner.workspace_id)
    await services.add_connection(
        owner.workspace_id, "mastodon", "desk", instance="social.example",
        actor_user_id=owner.user_id,
    )  # fmt: skip
    await sign_in(client, viewer.email)
    assert (await client.get("/wall")).status_code == 200
    creators = await db.fetch("SELECT type, created_by FROM stream_columns")
    assert [(r["type"], r["created_by"]) for r in creators] == [("platform_feed", owner.user_id)]


async def test_fetch_new_posts_now_says_whether_it_fetched_or_when_it_may(client, people):
    """The button did nothing visible inside the platform's minimum interval: the page is
    told, in the reader's language and time zone, what happened."""
    person = await signed_in_speaking(client, people, "de", "Europe/Berlin")
    column = await keyword_column(person.workspace_id, "Fluten")
    refresh = f"/wall/columns/{column}/refresh"
    ds = {"datastar-request": "true"}

    first = await client.post(refresh, data={"_csrf_token": csrf_of(client)}, headers=ds)
    assert "Fluten: Neue Beiträge werden jetzt abgerufen." in first.text  # never polled

    polled = datetime.now(UTC) - timedelta(seconds=20)
    await db.fetch(
        "UPDATE stream_sources SET last_polled_at = $1, next_poll_at = $1::timestamptz + interval '5 min',"
        " state = 'ready'",
        polled,
    )
    again = await client.post(refresh, data={"_csrf_token": csrf_of(client)}, headers=ds)
    [(last, after)] = re.findall(
        # (a day is named only when it is not today: "2. Dez., 00:01" around midnight)
        r"Fluten: bereits um (?:[^;]*, )?(\d\d:\d\d) abgerufen; der nächste Abruf ist ab"
        r" (?:[^;]*, )?(\d\d:\d\d)"
        r" möglich\.",
        again.text,
    )
    berlin = ZoneInfo("Europe/Berlin")
    assert last == polled.astimezone(berlin).strftime("%H:%M")
    next_poll = await db.fetchval("SELECT next_poll_at FROM stream_sources")
    assert after == next_poll.astimezone(berlin).strftime("%H:%M")
    assert next_poll > polled + timedelta(seconds=30)  # the platform's floor, not now
    assert 'class="notice"' in again.text


async def test_pull_to_refresh_fetches_for_editors_and_tells_viewers_when_the_column_fetches(
    client, people, new_client
):
    """One refresh, not two that read alike: the menu's "Fetch new posts now" (and an
    editor's pull) asks the platforms; a viewer's pull re-reads the column and is told when
    it fetched and fetches next, since what is stored is already on their live wall."""
    editor = await people.member("editor")
    viewer = await people.member("viewer", editor.workspace_id)
    column = await keyword_column(editor.workspace_id, "Floods")
    await sign_in(client, viewer.email)
    theirs = new_client()
    await sign_in(theirs, editor.email)
    as_viewer, as_editor = [(await c.get("/wall")).text for c in (client, theirs)]
    assert "data-reload" in as_viewer
    assert "data-refresh" not in as_viewer
    assert "data-refresh" in as_editor
    assert "data-reload" not in as_editor
    assert ">Reload<" not in as_editor

    pulled = await client.get(
        f"/wall/columns/{column}/reload", headers={"datastar-request": "true"}
    )
    assert f'id="col-{column}"' in pulled.text
    assert "Floods: up to date; it has not fetched anything yet." in pulled.text
    await db.fetch(
        "UPDATE stream_sources SET last_polled_at = '2026-12-01 14:02+00',"
        " next_poll_at = now() + interval '3 min', state = 'ready'"
    )
    pulled = await client.get(
        f"/wall/columns/{column}/reload", headers={"datastar-request": "true"}
    )
    assert re.search(
        r"Floods: up to date\. Fetched at Dec 1, 2:02\sPM; next fetch at \d", pulled.text
    )
