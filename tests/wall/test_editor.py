"""The column editor: server-rendered, typed values kept with the message beside the field,
live per-platform hints and account rows, the effective interval."""

from __future__ import annotations

from dataclasses import replace

from app.core import db, i18n
from app.streams import services as streams_services
from app.wall.editor import Typed, account_entry, effective_label, query_hints
from app.wall.labels import interval_label
from tests.factories import csrf_of, post_form, sign_in
from tests.wall.helpers import keyword_column

DS = {"datastar-request": "true"}


async def _editor(client, people):  # type: ignore[no-untyped-def]
    person = await people.member("editor")
    await sign_in(client, person.email)
    return person


async def test_plus_column_opens_the_drawer_with_the_types_fields(client, people, statuses):
    await _editor(client, people)
    drawer = await client.get("/wall/columns/new?type=keyword", headers=DS)
    assert 'id="editor"' in drawer.text
    assert 'name="query"' in drawer.text
    assert "Bluesky" in drawer.text
    assert "TikTok" in drawer.text
    accounts = await client.get("/wall/columns/new?type=account_list", headers=DS)
    assert 'name="accounts"' in accounts.text
    assert 'name="query"' not in accounts.text
    # The fields take no more than a column keeps (they took 200 and 400, then refused them).
    assert 'name="title" value="" maxlength="80"' in drawer.text
    assert 'name="query" value="" maxlength="200"' in drawer.text
    page = await client.get("/wall/columns/new?type=platform_feed")  # without JavaScript
    assert page.status_code == 200
    assert 'name="connection_id"' in page.text


async def test_the_drawer_is_a_dialog_the_page_opens_and_a_patch_leaves_as_it_is(
    client, people, statuses
):
    # The wall's script opens the drawer (modal on a phone, where it is a bottom sheet that
    # keeps the focus); a patch keeps whatever `open` it has. The page without the wall shows
    # it open, and its × and Cancel are plain links back to the wall.
    await _editor(client, people)
    drawer = (await client.get("/wall/columns/new", headers=DS)).text
    assert (
        '<dialog id="editor" class="editor" aria-labelledby="editor-title" data-preserve-attr="open">'
        in drawer
    )
    assert "el.closest('dialog').close()" in drawer
    page = (await client.get("/wall/columns/new")).text
    assert 'data-preserve-attr="open" open>' in page
    assert "el.closest('dialog').close()" not in page


async def test_creating_a_keyword_column_from_the_form(client, people, statuses):
    person = await _editor(client, people)
    response = await post_form(
        client,
        "/wall/columns",
        {
            "type": "keyword",
            "title": "Acampada",
            "query": "#acampada26",
            "platforms": "mastodon",
            "instances": "social.example",
        },
    )
    assert response.status_code == 303
    row = await db.fetchrow(
        "SELECT id, type, title, spec FROM stream_columns WHERE workspace_id = $1",
        person.workspace_id,
    )
    assert row["title"] == "Acampada"
    assert "acampada26" in row["spec"]
    # Back on the wall at the new column: it is added at the end, off screen on a phone.
    assert response.headers["location"] == f"/wall#col-{row['id']}"
    assert "Acampada" in (await client.get("/wall")).text
    # With JavaScript the closed drawer names it, and the page goes there (wall.js).
    form = {"type": "keyword", "title": "Más", "query": "#mas", "platforms": "mastodon",
            "instances": "social.example"}  # fmt: skip
    closed = await client.post(
        "/wall/columns", data={**form, "_csrf_token": csrf_of(client)}, headers=DS
    )
    made = await db.fetchval(
        "SELECT max(id) FROM stream_columns WHERE workspace_id = $1", person.workspace_id
    )
    assert (
        f'<dialog id="editor" class="editor" hidden data-preserve-attr="open" data-created="{made}">'
        in closed.text
    )


async def test_invalid_input_keeps_what_was_typed_with_the_message_beside_the_field(
    client, people, statuses
):
    person = await _editor(client, people)
    response = await post_form(
        client,
        "/wall/columns",
        {"type": "keyword", "title": "", "query": "hello <b>there</b>", "platforms": "mastodon"},
    )
    assert response.status_code == 422
    assert "Give the column a title." in response.text
    assert 'value="hello &lt;b&gt;there&lt;/b&gt;"' in response.text  # kept as typed, escaped
    assert 'aria-invalid="true" aria-describedby="err-title"' in response.text
    assert (
        await db.fetchval(
            "SELECT count(*) FROM stream_columns WHERE workspace_id = $1", person.workspace_id
        )
        == 0
    )
    bad_accounts = await post_form(
        client,
        "/wall/columns",
        {
            "type": "account_list",
            "title": "People",
            "accounts": "alice.bsky.social\nnot a handle!!",
        },
    )
    assert bad_accounts.status_code == 422
    assert "Line 2:" in bad_accounts.text
    assert "not a handle!!" in bad_accounts.text


async def test_query_hints_say_what_each_platform_can_do(client, people, statuses):
    await _editor(client, people)
    words = (await client.get("/wall/editor/hints?query=climate%20change", headers=DS)).text
    assert "Mastodon ✗" in words
    assert "#hashtag queries only" in words
    assert "TikTok ✗" in words
    tag = (await client.get("/wall/editor/hints?query=%23climate", headers=DS)).text
    assert "Mastodon ✓" in tag
    assert "#climate only" in tag
    # Before anything is typed: what each platform takes, not a made-up "#news only".
    blank = (await client.get("/wall/editor/hints?query=", headers=DS)).text
    assert "Mastodon ✓" in blank
    assert "#hashtags only" in blank
    assert "#news" not in blank
    drawer = (await client.get("/wall/columns/new?type=keyword", headers=DS)).text
    assert "#hashtags only" in drawer


async def test_x_with_its_budget_off_says_so_and_links_where_it_is_raised(client, people, statuses):
    person = await _editor(client, people)
    off = (await client.get("/wall/editor/hints?query=climate", headers=DS)).text
    assert "X ✗" in off
    assert "an admin must set a budget first" in off
    assert 'href="/settings/platforms#budgets">Set a budget in Settings → Platforms' in off
    await streams_services.set_ledger_cap(person.workspace_id, "x", 5000)
    on = (await client.get("/wall/editor/hints?query=climate", headers=DS)).text
    assert "X ✓" in on
    assert "#budgets" not in on


async def test_account_rows_resolve_as_you_type(client, people, statuses):
    await _editor(client, people)
    rows = (
        await client.get(
            "/wall/editor/accounts", params={"accounts": "@nobody\nbad handle"}, headers=DS
        )
    ).text
    assert 'id="account-rows"' in rows
    assert rows.count("<li") == 2
    assert "✗" in rows


async def test_editing_keeps_the_type_and_shows_the_effective_interval(client, people, statuses):
    person = await _editor(client, people)
    column = await keyword_column(person.workspace_id)
    drawer = (await client.get(f"/wall/columns/{column}/edit", headers=DS)).text
    assert 'value="Floods"' in drawer
    assert "Effective: every 2 minutes" in drawer
    response = await post_form(
        client,
        f"/wall/columns/{column}",
        {"type": "keyword", "title": "Renamed", "query": "#floods", "platforms": "mastodon",
         "instances": "social.example", "interval": "10", "paused": "on"},
    )  # fmt: skip
    assert response.status_code == 303
    row = await db.fetchrow(
        "SELECT title, refresh_policy FROM stream_columns WHERE id = $1", column
    )
    assert row["title"] == "Renamed"
    assert '"paused": true' in row["refresh_policy"]
    assert "600000" in row["refresh_policy"]


def test_pasted_accounts_name_their_platform_by_shape():
    assert account_entry("@bob@mastodon.social") == {
        "provider": "mastodon",
        "handle": "@bob@mastodon.social",
    }
    assert account_entry("alice.bsky.social")["provider"] == "bluesky"
    assert account_entry("UC" + "x" * 22)["provider"] == "youtube"
    assert account_entry("https://example.org/feed.xml")["provider"] == "rss"
    assert account_entry("rss:@bob@mastodon.social") == {
        "provider": "rss",
        "handle": "@bob@mastodon.social",
    }


async def test_an_x_account_without_the_workspace_key_is_unknown_not_an_error(
    client, people, statuses
):
    person = await _editor(client, people)
    response = await client.get(
        "/wall/editor/accounts", params={"accounts": "x:@someone"}, headers=DS
    )
    assert response.status_code == 200
    assert response.text.count("<li") == 1
    await streams_services.set_ledger_cap(person.workspace_id, "x", 5000)  # X is off at 0
    hints = (await client.get("/wall/editor/hints?query=climate%20change", headers=DS)).text
    assert "billed per post read" in hints


def test_a_one_minute_interval_reads_every_minute():
    """It read "every 1 minute" ("alle 1 Minute") in every busy column's header."""
    assert interval_label(60_000) == "every minute"
    assert interval_label(180_000) == "every 3 minutes"
    with i18n.speaking("de"):
        assert interval_label(60_000) == "jede Minute"
        assert interval_label(180_000) == "alle 3 Minuten"


def test_the_effective_interval_is_each_platforms_pace_as_the_column_will_say_it():
    """It said the slowest source's ("Effective: every 16 minutes" for a keyword column with
    YouTube), while Bluesky and Mastodon are fetched every 2 (each source at its own pace)."""
    hints = query_hints("#climate")
    keyword = Typed(type="keyword", query="#climate", platforms=("bluesky", "mastodon", "youtube"))
    assert effective_label(keyword, hints, []) == "every 2 minutes · YouTube: every 16 minutes"
    assert effective_label(replace(keyword, platforms=("youtube",)), hints, []) == (
        "every 16 minutes"
    )
    ten = replace(keyword, interval="10")
    assert effective_label(ten, hints, []) == "every 10 minutes · YouTube: every 16 minutes"
    # A platform that cannot take the query gets no source, so no pace: Mastodon reads
    # hashtags only, and words alone leave it out.
    words = replace(keyword, query="climate change", platforms=("mastodon", "youtube"))
    assert effective_label(words, query_hints("climate change"), []) == "every 16 minutes"
    accounts = Typed(type="account_list", accounts="alice.bsky.social\nUC" + "x" * 22)
    assert effective_label(accounts, [], []) == "every 3 minutes"
    assert effective_label(Typed(type="account_list"), [], []) == "every 3 minutes"  # none yet
    with i18n.speaking("de"):
        assert effective_label(keyword, hints, []) == "alle 2 Minuten · YouTube: alle 16 Minuten"


async def test_the_editor_says_each_platforms_pace(client, people, statuses):
    await _editor(client, people)
    drawer = (await client.get("/wall/columns/new?type=keyword", headers=DS)).text
    assert (
        "Effective: every 2 minutes · YouTube: every 16 minutes"
        " (each platform at its own pace, within its limits)" in drawer
    )


async def test_the_effective_line_follows_the_form_as_it_is_changed(client, people, statuses):
    await _editor(client, people)
    asked = [("type", "keyword"), ("query", "#climate"), ("platforms", "bluesky"),
             ("platforms", "youtube"), ("interval", "10"), ("_csrf_token", "")]  # fmt: skip
    line = (await client.get("/wall/editor/effective", params=asked, headers=DS)).text
    assert 'id="effective"' in line
    assert "Effective: every 10 minutes · YouTube: every 16 minutes" in line
    accounts = [("type", "account_list"), ("accounts", "alice.bsky.social"), ("interval", "1")]
    line = (await client.get("/wall/editor/effective", params=accounts, headers=DS)).text
    assert "Effective: every minute (" in line
