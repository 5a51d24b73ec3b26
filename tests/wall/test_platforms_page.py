"""Settings → Platforms: connect and remove accounts (checked by the demo platforms through
egress), workspace keys, budget caps, who may change what, and no secret in any answer."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from app.core import db
from app.demo.bluesky import BlueskyDemo
from app.demo.content import DemoWorld
from app.demo.mastodon import DEMO_TOKEN, MastodonDemo
from app.demo.world import SERVICES, RunningWorld, serve_world
from app.egress import use_egress
from app.streams import queries, services
from app.streams.platforms import PLATFORMS
from app.streams.types import SourceState
from tests.egress.conftest import MakeEgress, make_egress
from tests.factories import post_form, sign_in

__all__ = ["make_egress"]

URL = "/settings/platforms"
BLUESKY_PASSWORD = "demo-demo-demo-demo"  # an app password's shape; the demo takes any
YOUTUBE_KEY = "AIzaSy-very-secret-youtube-key"
X_TOKEN = "AAAA-very-secret-x-bearer"


@pytest.fixture
async def demo(services: None, make_egress: MakeEgress) -> AsyncIterator[RunningWorld]:
    """The demo's Bluesky and Mastodon servers; egress diverts the real origins to them."""
    wanted = tuple(s for s in SERVICES if s.name in ("bluesky", "mastodon.social", "chaos.social"))
    async with serve_world(DemoWorld(7), services=wanted) as running:
        use_egress(make_egress(egress_divert=running.divert))
        yield running
        use_egress(None)


async def signed_in(client, people, role: str = "admin"):  # type: ignore[no-untyped-def]
    person = await people.member(role)
    await sign_in(client, person.email)
    return person


def mastodon_me(demo: RunningWorld, host: str) -> str:
    server = demo.servers[host]
    assert isinstance(server, MastodonDemo)
    return server.me.handle


async def test_an_admin_connects_a_mastodon_account_and_its_column_appears(
    client, people, demo
) -> None:
    person = await signed_in(client, people)
    answer = await post_form(
        client,
        f"{URL}/connections",
        {"provider": "mastodon", "instance": "https://Chaos.Social/", "secret": DEMO_TOKEN},
    )
    assert answer.status_code == 303, answer.text
    [use] = await queries.connection_uses(person.workspace_id)
    assert use.connection.instance == "chaos.social"
    assert use.connection.handle == mastodon_me(demo, "chaos.social")
    # Its home timeline is a column at once, and the page names it beside the account.
    assert [title for _id, title in use.columns] == [use.connection.title]
    page = await client.get(answer.headers["location"])
    assert page.status_code == 200
    assert use.connection.handle in page.text
    # Its instance a word apart from the name ("maya@chaos.social· chaos.social" before).
    assert '> <span class="muted">· chaos.social</span>' in page.text
    assert f'href="/wall#col-{use.columns[0][0]}"' in page.text
    assert DEMO_TOKEN not in page.text


async def test_a_refused_token_keeps_what_was_typed_and_never_echoes_the_token(
    client, people, demo
) -> None:
    person = await signed_in(client, people)
    typed = "wrong-token-that-must-not-come-back"
    answer = await post_form(
        client,
        f"{URL}/connections",
        {"provider": "mastodon", "instance": "chaos.social", "secret": typed},
    )
    assert answer.status_code == 422
    assert "chaos.social did not accept this token." in answer.text
    assert 'value="chaos.social"' in answer.text  # the instance stays typed
    assert typed not in answer.text
    assert 'id="mastodon-secret-error"' in answer.text  # the message is beside the field
    assert await queries.connections(person.workspace_id) == []


async def test_a_bad_instance_or_missing_field_is_said_beside_it(client, people, demo) -> None:
    await signed_in(client, people)
    answer = await post_form(
        client, f"{URL}/connections", {"provider": "mastodon", "instance": "not a host"}
    )
    assert answer.status_code == 422
    assert 'id="mastodon-instance-error"' in answer.text
    assert 'value="not a host"' in answer.text
    assert 'id="mastodon-secret-error"' in answer.text


async def test_bluesky_is_connected_with_an_app_password(client, people, demo) -> None:
    person = await signed_in(client, people)
    server = demo.servers["bluesky"]
    assert isinstance(server, BlueskyDemo)
    answer = await post_form(
        client,
        f"{URL}/connections",
        {"provider": "bluesky", "handle": "maya.okafor.bsky.social", "secret": BLUESKY_PASSWORD},
    )
    if answer.status_code != 303:
        pytest.fail(answer.text[-2000:])
    [use] = await queries.connection_uses(person.workspace_id)
    assert use.connection.provider == "bluesky"
    page = (await client.get(URL)).text
    assert BLUESKY_PASSWORD not in page
    # Bluesky's sign-in names the account by its handle only: said once, not "h · h".
    assert [title for _id, title in use.columns] == ["maya.okafor.bsky.social"]
    assert page.count('<strong dir="auto">maya.okafor.bsky.social</strong>') == 1
    assert 'class="muted" dir="auto">maya.okafor.bsky.social<' not in page


async def test_removing_asks_first_then_disables_its_columns(client, people, demo) -> None:
    person = await signed_in(client, people)
    ws = person.workspace_id
    connection_id = await services.connect_account(
        ws,
        {"provider": "mastodon", "instance": "chaos.social", "secret": DEMO_TOKEN},
        actor_user_id=None,
    )
    await services.seed_platform_columns(ws)
    [use] = await queries.connection_uses(ws)
    confirm = await client.get(f"{URL}/connections/{connection_id}/remove")
    assert confirm.status_code == 200
    assert 'id="confirm-remove"' in confirm.text
    assert use.columns[0][1] in confirm.text  # names the columns that stop
    assert await queries.connections(ws)  # asking removed nothing
    removed = await post_form(client, f"{URL}/connections/{connection_id}/remove")
    assert removed.status_code == 303
    assert await queries.connections(ws) == []
    states = await db.fetch(
        "SELECT state, last_error FROM stream_sources WHERE workspace_id = $1", ws
    )
    assert {r["state"] for r in states} == {"disabled"}
    column = await queries.column_view(ws, use.columns[0][0])
    assert column is not None
    assert column.sources[0].state == SourceState.DISABLED
    # Connecting the same account again brings the column back to life.
    again = await post_form(
        client,
        f"{URL}/connections",
        {"provider": "mastodon", "instance": "chaos.social", "secret": DEMO_TOKEN},
    )
    assert again.status_code == 303
    column = await queries.column_view(ws, use.columns[0][0])
    assert column is not None
    assert column.sources[0].state == SourceState.PENDING
    unknown = await post_form(client, f"{URL}/connections/{2**70}/remove")
    assert unknown.status_code == 404


async def test_workspace_keys_are_set_replaced_and_removed_never_shown(client, people) -> None:
    person = await signed_in(client, people)
    ws = person.workspace_id
    empty = await post_form(client, f"{URL}/keys/youtube", {"secret": "  "})
    assert empty.status_code == 422
    assert 'id="key-youtube-secret-error"' in empty.text
    for key in ("first-key", YOUTUBE_KEY):
        saved = await post_form(client, f"{URL}/keys/youtube", {"secret": key})
        assert saved.status_code == 303
    assert await queries.sealed_credential(ws, "youtube") is not None
    x = await post_form(client, f"{URL}/keys/x", {"secret": X_TOKEN})
    assert x.status_code == 303
    bluesky = await post_form(
        client,
        f"{URL}/keys/bluesky",
        {"handle": "desk.bsky.social", "secret": "abcd-efgh-ijkl-mnop"},
    )
    assert bluesky.status_code == 303
    page = await client.get(URL)
    for secret in (YOUTUBE_KEY, X_TOKEN, "abcd-efgh-ijkl-mnop", "first-key"):
        assert secret not in page.text
    status = {k["provider"]: k for k in await queries.credentials_status(ws)}
    assert status["youtube"]["configured"]
    assert status["x"]["configured"]
    assert status["bluesky"]["label"] == "desk.bsky.social"
    removed = await post_form(client, f"{URL}/keys/youtube/remove")
    assert removed.status_code == 303
    assert await queries.sealed_credential(ws, "youtube") is None
    assert (await post_form(client, f"{URL}/keys/tiktok", {"secret": "x"})).status_code == 404


async def test_an_admin_raises_a_cap_and_bad_caps_are_refused_by_field(client, people) -> None:
    person = await signed_in(client, people)
    ws = person.workspace_id
    page = await client.get(URL)
    assert "YouTube searches per day" in page.text
    assert "0 of 90 used" in page.text
    raised = await post_form(client, f"{URL}/budgets/youtube", {"cap": "120"})
    assert raised.status_code == 303
    [youtube] = [b for b in await queries.budgets(ws) if b.provider == "youtube"]
    assert youtube.cap == 120
    assert youtube.renews_at is not None
    for bad in ("-1", "lots", "99999999999999"):
        refused = await post_form(client, f"{URL}/budgets/x", {"cap": bad})
        assert refused.status_code == 422, bad
        assert 'id="budget-x-cap-error"' in refused.text
        assert f'value="{bad}"' in refused.text
    assert (await post_form(client, f"{URL}/budgets/bluesky", {"cap": "5"})).status_code == 422


@pytest.mark.parametrize("role", ["editor", "viewer"])
async def test_editors_and_viewers_see_the_page_but_cannot_change_it(client, people, role) -> None:
    person = await signed_in(client, people, role)
    ws = person.workspace_id
    await services.set_credential(ws, "youtube", YOUTUBE_KEY)
    page = await client.get(URL)
    assert page.status_code == 200
    assert "Configured" in page.text
    assert YOUTUBE_KEY not in page.text
    assert 'action="/settings/platforms/connections"' not in page.text  # no forms to change
    assert 'action="/settings/platforms/budgets/' not in page.text
    for url, data in (
        (f"{URL}/connections", {"provider": "mastodon", "instance": "chaos.social", "secret": "t"}),
        (f"{URL}/keys/youtube", {"secret": "mine"}),
        (f"{URL}/keys/youtube/remove", {}),
        (f"{URL}/budgets/youtube", {"cap": "1000"}),
        (f"{URL}/connections/1/remove", {}),
    ):
        refused = await post_form(client, url, data)
        assert refused.status_code == 403, url
    assert await queries.sealed_credential(ws, "youtube") is not None
    [youtube] = [b for b in await queries.budgets(ws) if b.provider == "youtube"]
    assert youtube.cap == 90


async def test_another_workspaces_connection_is_not_found(client, people, demo) -> None:
    other = await people.member("admin")
    theirs = await services.connect_account(
        other.workspace_id,
        {"provider": "mastodon", "instance": "chaos.social", "secret": DEMO_TOKEN},
        actor_user_id=None,
    )
    await signed_in(client, people)
    assert (await client.get(f"{URL}/connections/{theirs}/remove")).status_code == 404
    assert (await post_form(client, f"{URL}/connections/{theirs}/remove")).status_code == 404
    assert await queries.connections(other.workspace_id)


async def test_the_wall_sends_people_here_to_mend_a_column(client, people, demo) -> None:
    person = await signed_in(client, people, "editor")
    ws = person.workspace_id
    editor = await client.get("/wall/columns/new?type=platform_feed")
    assert "Connect an account in Settings → Platforms" in editor.text
    assert 'href="/settings/platforms#connections"' in editor.text
    connection_id = await services.connect_account(
        ws,
        {"provider": "mastodon", "instance": "chaos.social", "secret": DEMO_TOKEN},
        actor_user_id=None,
    )
    await services.seed_platform_columns(ws)
    assert (
        "Connect an account in Settings"
        not in (await client.get("/wall/columns/new?type=platform_feed")).text
    )
    await services.delete_connection(ws, connection_id)
    wall = (await client.get("/wall")).text
    assert 'href="/settings/platforms#connections">Reconnect the account' in wall
    await db.fetch("UPDATE stream_sources SET state = 'budget_paused' WHERE workspace_id = $1", ws)
    wall = (await client.get("/wall")).text
    assert 'href="/settings/platforms#budgets">Raise the cap' in wall


async def test_the_page_follows_connection_states_keys_and_caps_live(client, people) -> None:
    from app.wall.platforms import platforms_stream
    from tests.live.helpers import next_event, stream_request

    person = await people.member("admin")
    ws = person.workspace_id
    connection_id = await services.add_connection(
        ws, "mastodon", "maya@chaos.social", instance="chaos.social", secret=DEMO_TOKEN
    )
    await services.seed_platform_columns(ws)
    stream = platforms_stream(await stream_request(person.user_id, f"{URL}/stream")).iterator
    first = await next_event(stream)
    assert "Waiting for the first poll" in first
    assert 'id="key-list"' not in first  # keys and budgets keep what the page shows
    await db.fetch(
        "UPDATE stream_sources SET state = 'error', last_error = 'chaos.social refused the token'"
        " WHERE connection_id = $1",
        connection_id,
    )
    await services.set_ledger_cap(ws, "youtube", 150)  # a notice for keys and budgets
    patched = await next_event(stream)
    assert "Not working: chaos.social refused the token" in patched
    assert "0 of 150 used" in patched
    await services.set_credential(ws, "youtube", YOUTUBE_KEY)
    keys = await next_event(stream)
    assert "Configured" in keys
    assert YOUTUBE_KEY not in keys
    # A poll spends the budget: its usage line is patched alone (a cap being typed stays).
    rule = PLATFORMS["youtube"].ledger
    assert rule is not None
    await services.reserve_ledger(ws, "youtube", rule)
    spent = await next_event(stream)
    assert 'id="budget-usage-youtube"' in spent
    assert "1 of 150 used" in spent
    assert 'id="budget-list"' not in spent
    await stream.aclose()


async def test_the_editor_names_a_connected_mastodon_account_once(client, people, demo) -> None:
    # Its handle is already user@instance: the option read "maya@chaos.social@chaos.social".
    person = await signed_in(client, people, "editor")
    connection_id = await services.connect_account(
        person.workspace_id,
        {"provider": "mastodon", "instance": "chaos.social", "secret": DEMO_TOKEN},
        actor_user_id=None,
    )
    handle = await db.fetchval("SELECT handle FROM stream_connections WHERE id = $1", connection_id)
    assert handle.endswith("@chaos.social")
    editor = (await client.get("/wall/columns/new?type=platform_feed")).text
    assert f"Mastodon · {handle}</option>" in editor
