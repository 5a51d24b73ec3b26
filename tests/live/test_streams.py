"""Live plumbing: after-commit notices, the hub's fan-out, state-then-follow streams."""

import asyncio
from itertools import pairwise

import pytest

from app.core import db
from app.core import redis as core_redis
from app.live.hub import hub
from app.live.notices import channel, publish, publish_after_commit
from app.live.streams import KEEPALIVE, follow
from tests.articles.helpers import live_notices
from tests.live.helpers import stream_request


async def _workspace(people) -> int:
    person = await people.member("owner")
    return person.workspace_id


async def _follow(workspace_id: int, topics: set[str], render, min_interval: float = 0.0):
    """follow()'s event stream for the workspace's owner, as the browser reads it."""
    owner = await db.fetchval(
        "SELECT user_id FROM memberships WHERE workspace_id = $1 AND role = 'owner'", workspace_id
    )
    request = await stream_request(owner)
    return follow(request, topics, render, min_interval=min_interval).iterator


async def _next(stream, timeout: float = 5.0) -> str:
    chunk = await asyncio.wait_for(anext(stream), timeout)
    return chunk.decode() if isinstance(chunk, bytes) else chunk


async def _counter(people, *, min_interval: float = 0.0, render_seconds: float = 0.0):  # type: ignore[no-untyped-def]
    """A stream of a counter view, its first state read: (workspace, stream, the counter,
    when each render began). Each render takes `render_seconds` (a costly query)."""
    workspace_id = await _workspace(people)
    state = {"n": 0}
    rendered_at: list[float] = []
    loop = asyncio.get_running_loop()

    async def render(changed: set[str]) -> list[str]:
        rendered_at.append(loop.time())
        await asyncio.sleep(render_seconds)
        return [f'<p id="count">{state["n"]}</p>']

    stream = await _follow(workspace_id, {"counter"}, render, min_interval=min_interval)
    await _next(stream)
    return workspace_id, stream, state, rendered_at


async def _count_to(last: int, workspace_id: int, stream, state: dict[str, int]) -> float:  # type: ignore[no-untyped-def]
    """A notice per count, 50 ms apart (an import's items), until the stream shows `last`:
    the seconds from the first notice to the last (longer than planned on a busy machine)."""
    loop = asyncio.get_running_loop()
    first = loop.time()
    for n in range(1, last + 1):
        state["n"] = n
        await publish(workspace_id, "counter")
        if n < last:
            await asyncio.sleep(0.05)
    span = loop.time() - first
    shown = ""
    while f'id="count">{last}<' not in shown:
        shown = await _next(stream)
    return span


async def test_a_stream_sends_the_state_first_then_follows_changes(services, people):
    workspace_id = await _workspace(people)
    state = {"n": 0}
    renders: list[set[str]] = []

    async def render(changed: set[str]) -> list[str]:
        renders.append(changed)
        return [f'<p id="count">{state["n"]}</p>']

    stream = await _follow(workspace_id, {"counter"}, render)
    first = await _next(stream)
    assert 'id="count">0<' in first
    assert renders == [{"counter"}]
    state["n"] = 1
    await publish(workspace_id, "counter")
    second = await _next(stream)
    assert 'id="count">1<' in second
    await stream.aclose()


async def test_notices_of_other_topics_and_workspaces_do_not_wake_a_stream(
    services, people, monkeypatch
):
    workspace_id = await _workspace(people)
    other_workspace = await _workspace(people)
    monkeypatch.setattr("app.live.streams.KEEPALIVE_SECONDS", 0.3)

    async def render(changed: set[str]) -> list[str]:
        return ['<p id="x">state</p>']

    stream = await _follow(workspace_id, {"counter"}, render)
    await _next(stream)
    await publish(workspace_id, "something-else")
    await publish(other_workspace, "counter")
    assert await _next(stream) == KEEPALIVE  # only the keep-alive comes after quiet
    await stream.aclose()


async def test_a_burst_of_notices_is_rendered_once_not_once_per_notice(services, people):
    workspace_id = await _workspace(people)
    renders = 0

    async def render(changed: set[str]) -> list[str]:
        nonlocal renders
        renders += 1
        return ['<p id="x">state</p>']

    stream = await _follow(workspace_id, {"counter"}, render)
    await _next(stream)
    async with core_redis.client().pipeline(transaction=False) as burst:
        for _ in range(100):
            burst.publish(channel(workspace_id), '{"topic":"counter"}')
        await burst.execute()
    await _next(stream)
    await asyncio.sleep(0.3)
    assert renders == 2  # the first state, then one re-render for the whole burst
    await stream.aclose()


async def test_a_busy_view_renders_at_most_once_per_interval_and_ends_on_the_last_change(
    services, people
):
    """An import's job page gets a notice per item: 20 notices, 50 ms apart (each would be
    a render of its own), make a view with a 0.3 s interval render every 0.3 s at most."""
    workspace_id, stream, state, rendered_at = await _counter(people, min_interval=0.3)
    span = await _count_to(20, workspace_id, stream, state)
    renders = rendered_at[1:]  # after the first state
    # Not 20 renders: one as the first notice comes, one per interval while they come (about
    # a second; longer on a busy machine, and then more renders), and one for the last ones.
    assert 2 <= len(renders) <= span / 0.3 + 2
    gaps = [later - earlier for earlier, later in pairwise(rendered_at)]
    assert min(gaps[1:]) >= 0.29  # the first change after quiet goes out at once
    await stream.aclose()


async def test_a_costly_view_spends_at_most_a_quarter_of_its_time_rendering(services, people):
    """A search over a large library took ~0.4 s to render, and an import's notices came
    faster than that: the view rendered back to back, a database core for each open search."""
    workspace_id, stream, state, rendered_at = await _counter(people, render_seconds=0.15)
    loop = asyncio.get_running_loop()
    started = loop.time()
    await _count_to(30, workspace_id, stream, state)
    renders = rendered_at[1:]
    gaps = [later - earlier for earlier, later in pairwise(renders)]
    assert gaps
    assert min(gaps) >= 0.55  # 0.15 s renders at most every 0.6 s, not every 0.15
    assert len(renders) <= (loop.time() - started) / 0.55 + 1
    await stream.aclose()


async def test_a_notice_goes_out_only_after_commit(services, people):
    workspace_id = await _workspace(people)
    async with hub.subscribe(workspace_id, {"counter"}) as subscription:

        async def rolled_back() -> None:
            async with db.workspace_tx(workspace_id) as tx:
                publish_after_commit(tx, "counter")
                raise RuntimeError("rolled back")

        with pytest.raises(RuntimeError):
            await rolled_back()
        assert await subscription.next_change(0.5) == set()
        async with db.workspace_tx(workspace_id) as tx:
            publish_after_commit(tx, "counter")
            assert await subscription.next_change(0.3) == set()  # not before the commit
        assert await subscription.next_change(2.0) == {"counter"}


async def test_a_reconnect_sees_what_changed_while_it_was_away(services, people):
    """State, not deltas: nothing published while disconnected needs replaying."""
    workspace_id = await _workspace(people)
    rows: list[str] = ["first"]

    async def render(changed: set[str]) -> list[str]:
        return [f'<ol id="rows">{"".join(f"<li>{r}</li>" for r in rows)}</ol>']

    stream = await _follow(workspace_id, {"rows"}, render)
    await _next(stream)
    await stream.aclose()  # the browser goes away
    rows.append("while away")
    await publish(workspace_id, "rows")  # nobody listens
    again = await _follow(workspace_id, {"rows"}, render)
    assert "<li>while away</li>" in await _next(again)
    await again.aclose()


async def test_a_transactions_notices_go_out_once_each_in_order(services, people):
    workspace_id = await _workspace(people)
    async with live_notices(workspace_id) as seen, db.workspace_tx(workspace_id) as tx:
        publish_after_commit(tx, "counter")
        publish_after_commit(tx, "library")
        publish_after_commit(tx, "counter")  # says nothing the first did not
        publish_after_commit(tx, "counter", article_id=7)
    assert seen.topics == ["counter", "library", "counter"]


async def test_a_writer_does_not_wait_for_its_notices_and_they_still_go_out(
    services, people, redis
):
    workspace_id = await _workspace(people)
    async with live_notices(workspace_id) as seen:
        await redis.execute_command("CLIENT", "PAUSE", 1000, "WRITE")  # PUBLISH waits a second
        started = asyncio.get_running_loop().time()
        async with db.workspace_tx(workspace_id) as tx:
            publish_after_commit(tx, "counter")
        assert asyncio.get_running_loop().time() - started < 0.5  # committed and gone on
        assert seen.topics == []
    assert seen.topics == ["counter"]  # sent once Redis took it (live_notices settles)
