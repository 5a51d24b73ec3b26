"""An account its platform does not know is said at once: when the column is saved, and on the
column from its first poll on - never "Fetching the first posts..." until the third.

The demo's platforms (app/demo) answer through a real Egress as the real ones do: Bluesky's
resolveHandle a 400 `InvalidRequest`, Mastodon's accounts/lookup a 404 "Record not found",
YouTube's channel page and feed a 404, a missing feed a 404; getAuthorFeed of an actor it
does not have a 400 "Profile not found".
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest
from redis.asyncio import Redis

from app.core import db, i18n
from app.demo.bluesky import BlueskyDemo
from app.demo.content import ARTICLE_ORIGIN, DemoWorld
from app.demo.http import DemoResponse
from app.demo.world import RunningWorld, serve_world
from app.egress import use_egress
from app.streams import polling, queries, resolver, services
from app.streams.types import ColumnView
from app.wall.labels import status
from tests.egress.conftest import MakeEgress
from tests.egress.servers import Reply
from tests.factories import csrf_of, sign_in
from tests.streams.conftest import make_due, source_row, sources_of
from tests.streams.test_polling import feed, rss

DS = {"datastar-request": "true"}
START = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=5)
FETCHING = "Fetching the first posts…"


@pytest.fixture
async def world(services: None, make_egress: MakeEgress) -> AsyncIterator[RunningWorld]:
    async with serve_world(DemoWorld(7, START)) as running:
        use_egress(make_egress(egress_divert=running.divert))
        yield running
        use_egress(None)


async def _accounts(ws: int, *accounts: tuple[str, str], title: str = "People") -> int:
    spec = {"accounts": [{"provider": p, "handle": h} for p, h in accounts]}
    return await services.create_column(
        ws, {"type": "account_list", "title": title, "spec": spec}, actor_user_id=None
    )


async def _view(ws: int, column: int) -> ColumnView:
    view = await queries.column_view(ws, column)
    assert view is not None
    return view


async def _forget_answers(redis: Redis) -> None:
    """The poll asks the platform again instead of the handle cache the save filled."""
    await redis.flushdb()
    resolver.forget_local()


@pytest.mark.parametrize(
    ("provider", "handle", "platform"),
    [
        ("bluesky", "nobody.bsky.social", "Bluesky"),
        ("mastodon", "nobody@mastodon.social", "Mastodon"),
        ("youtube", "@nobody-at-all", "YouTube"),
        ("youtube", "UC" + "x" * 22, "YouTube"),
        ("rss", f"{ARTICLE_ORIGIN}/feeds/nothing-here.rss", "RSS/Atom"),
    ],
)
async def test_an_account_its_platform_does_not_know_is_said_from_the_save_and_the_first_poll(
    people, world, redis, provider, handle, platform
):
    ws, _owner = await people.workspace()
    column = await _accounts(ws, (provider, handle))
    [source] = await sources_of(column)
    row = await source_row(source)
    assert row["state"] == "error"
    assert f"was not found on {platform}" in row["last_error"]
    said = status(await _view(ws, column), "UTC")
    assert (said.tone, said.text) == ("error", "No posts can be fetched")
    assert any(f"was not found on {platform}" in line for line in said.details)
    # No workspace key mends it: accounts are read keyless (it said "Check the workspace keys").
    assert said.action is None

    # Its first poll asks the platform again and hears the same: still said, not "retrying".
    await _forget_answers(redis)
    await polling.poll_source(ws, source, jitter=0)
    row = await source_row(source)
    assert (row["state"], row["consecutive_failures"]) == ("error", 1)
    assert f"was not found on {platform}" in row["last_error"]
    said = status(await _view(ws, column), "UTC")
    assert (said.tone, said.text) == ("error", "No posts can be fetched")
    assert said.text != FETCHING
    # Not a silent stop: asked again on the back-off (a handle made later heals).
    assert float(row["due_in"]) == pytest.approx(row["interval_ms"] / 1000 * 2, abs=5)


async def test_an_account_the_save_could_not_check_is_said_after_its_first_poll_not_its_third(
    people, world
):
    ws, _owner = await people.workspace()
    bluesky = world.servers["bluesky"]
    assert isinstance(bluesky, BlueskyDemo)
    bluesky.fail_next.append(DemoResponse(502, body="upstream down"))  # the save's lookup
    column = await _accounts(ws, ("bluesky", "nobody.bsky.social"))
    [source] = await sources_of(column)
    assert (await source_row(source))["state"] == "pending"  # not known yet: no answer
    assert status(await _view(ws, column), "UTC").text == FETCHING

    # A failure that is no answer (the AppView down) is retried before anyone is alarmed.
    bluesky.fail_next.append(DemoResponse(502, body="upstream down"))
    await polling.poll_source(ws, source, jitter=0)
    row = await source_row(source)
    assert (row["state"], row["consecutive_failures"]) == ("pending", 1)
    said = status(await _view(ws, column), "UTC")
    assert said.text == FETCHING
    assert any("502" in line for line in said.details)

    # The next poll hears "Unable to resolve handle" (HTTP 400): said at once.
    await make_due(source)
    await polling.poll_source(ws, source, jitter=0)
    row = await source_row(source)
    assert (row["state"], row["consecutive_failures"]) == ("error", 2)
    said = status(await _view(ws, column), "UTC")
    assert said.text == "No posts can be fetched"
    # Said once: the reason names the account ("Bluesky · nobody.bsky.social: " went first).
    assert said.details == ("nobody.bsky.social was not found on Bluesky.",)
    assert bluesky.hits_of("/xrpc/com.atproto.identity.resolveHandle")


async def test_an_account_gone_from_its_feed_is_not_found_at_once(people, world):
    # *.demo.bsky.social handles resolve (the demo's AppView answers a DID for any), but the
    # AppView has no profile for this one: getAuthorFeed answers 400 "Profile not found".
    ws, _owner = await people.workspace()
    column = await _accounts(
        ws, ("bluesky", "maya.okafor.bsky.social"), ("bluesky", "ghost.demo.bsky.social")
    )
    found, ghost = await sources_of(column)
    assert (await source_row(ghost))["state"] == "pending"  # its handle resolved
    await polling.poll_source(ws, found, jitter=0)
    await polling.poll_source(ws, ghost, jitter=0)
    assert (await source_row(found))["state"] == "ready"
    row = await source_row(ghost)
    assert (row["state"], row["consecutive_failures"]) == ("error", 1)
    assert row["last_error"] == "ghost.demo.bsky.social was not found on Bluesky."
    said = status(await _view(ws, column), "UTC")
    assert (said.tone, said.text) == ("warn", "Some sources are not updating")
    assert said.details == ("ghost.demo.bsky.social was not found on Bluesky.",)


async def test_a_feed_that_is_gone_since_it_worked_says_so_at_once(people, site, site_egress):
    ws, _owner = await people.workspace()
    url = feed(site, "/moved.rss", rss(2))
    column = await _accounts(ws, ("rss", url), title="Feeds")
    [source] = await sources_of(column)
    await polling.poll_source(ws, source, jitter=0)
    assert (await source_row(source))["state"] == "ready"
    site.routes["/moved.rss"] = Reply(status=410, body=b"gone")
    await make_due(source)
    await polling.poll_source(ws, source, jitter=0)
    row = await source_row(source)
    assert (row["state"], row["consecutive_failures"]) == ("error", 1)
    assert row["last_error"] == f"{url} was not found on RSS/Atom."
    said = status(await _view(ws, column), "UTC")
    assert said.tone == "error"
    assert said.text.startswith("Not updating: showing the last data from ")
    # A timeout or a 500 is no answer: it stays "Behind" until its third failure.
    site.routes["/moved.rss"] = Reply(status=500, body=b"oops")
    await make_due(source)
    await polling.poll_source(ws, source, jitter=0)
    assert (await source_row(source))["consecutive_failures"] == 2


async def test_the_editor_says_at_once_which_accounts_were_not_found(client, people, world):
    person = await people.member("editor")
    await sign_in(client, person.email)
    form = {
        "type": "account_list",
        "title": "Reporters",
        "accounts": "maya.okafor.bsky.social\n@nobody.bsky.social\nnobody@mastodon.social",
        "_csrf_token": csrf_of(client),
    }
    saved = await client.post("/wall/columns", data=form, headers=DS)
    assert saved.status_code == 200
    assert "data-created=" in saved.text  # saved, and the drawer closed
    assert (
        "Reporters: saved, but not found: @nobody.bsky.social on Bluesky,"
        " nobody@mastodon.social on Mastodon." in saved.text
    )
    assert 'id="wall-notice"' in saved.text

    # Every account missing: the column can show nothing, and the person is told so.
    form = {**form, "title": "Nobody", "accounts": "@nobody.bsky.social"}
    saved = await client.post("/wall/columns", data=form, headers=DS)
    assert (
        "Nobody: no account was found (@nobody.bsky.social on Bluesky); it cannot show posts."
        in saved.text
    )
    # The wall's column says it too, never "Fetching the first posts…".
    wall = (await client.get("/wall")).text
    assert FETCHING not in wall
    assert "No posts can be fetched" in wall
    assert "nobody.bsky.social was not found on Bluesky." in wall

    # All found: nothing to tell.
    form = {**form, "title": "Maya", "accounts": "maya.okafor.bsky.social"}
    saved = await client.post("/wall/columns", data=form, headers=DS)
    assert "wall-notice" not in saved.text

    # In German, from the same stored reason.
    with i18n.speaking("de"):
        view = await queries.column_view(
            person.workspace_id,
            await db.fetchval(
                "SELECT id FROM stream_columns WHERE workspace_id = $1 AND title = 'Nobody'",
                person.workspace_id,
            ),
        )
        assert view is not None
        said = status(view, "UTC")
    assert "Bluesky" in said.details[0]
    assert "was not found" not in said.details[0]


async def test_a_feed_that_worked_and_answers_404_once_is_behind_not_said_gone(
    people, site, site_egress
):
    # YouTube's feeds answer 404 now and then: a source that has worked takes a bare 404 as
    # any failure (410 Gone is said at once, above), and says "not found" at its third.
    ws, _owner = await people.workspace()
    url = feed(site, "/flaky.rss", rss(2))
    column = await _accounts(ws, ("rss", url), title="Feeds")
    [source] = await sources_of(column)
    await polling.poll_source(ws, source, jitter=0)
    site.routes["/flaky.rss"] = Reply(status=404, body=b"not found")
    states = []
    for _ in range(3):
        await make_due(source)
        await polling.poll_source(ws, source, jitter=0)
        row = await source_row(source)
        states.append((row["state"], row["consecutive_failures"]))
    assert states == [("stale", 1), ("stale", 2), ("error", 3)]
    assert row["last_error"] == f"{url} was not found on RSS/Atom."
