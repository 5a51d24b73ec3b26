"""Ledger arithmetic: YouTube's daily window, X's spend cap, Instagram's rolling 7 days."""

from datetime import UTC, datetime, timedelta

from app.core import db
from app.streams import services
from app.streams.platforms import PLATFORMS, rolling_slot
from app.streams.types import SourceState

YT = PLATFORMS["youtube"].ledger
X = PLATFORMS["x"].ledger
IG = PLATFORMS["instagram"].ledger
WEEK = timedelta(days=7)


async def test_youtube_search_calls_roll_over_at_googles_midnight_pacific(people):
    ws, _owner = await people.workspace()
    await services.set_ledger_cap(ws, "youtube", 2)
    evening = datetime(2026, 12, 2, 7, 59, 30, tzinfo=UTC)  # 23:59:30 in California
    assert (await services.reserve_ledger(ws, "youtube", YT, now=evening)).units == 1
    assert (await services.reserve_ledger(ws, "youtube", YT, now=evening)).units == 1
    spent = await services.reserve_ledger(ws, "youtube", YT, now=evening)
    assert spent.units == 0
    assert spent.state == SourceState.BUDGET_PAUSED
    # Google's next quota day (08:00 UTC in winter), not UTC midnight nor 24 h on
    assert spent.frees_at == datetime(2026, 12, 2, 8, tzinfo=UTC)

    morning = datetime(2026, 12, 2, 8, 0, 5, tzinfo=UTC)
    fresh = await services.reserve_ledger(ws, "youtube", YT, now=morning)
    assert fresh.units == 1
    assert fresh.window_start == datetime(2026, 12, 2, 8, tzinfo=UTC)
    caps = await db.fetch(
        "SELECT window_start, units_used, units_cap FROM provider_budget_ledger"
        " WHERE workspace_id = $1 ORDER BY window_start",
        ws,
    )
    # Yesterday stays spent at its cap; today's window inherited the cap that was set.
    assert [(r["units_used"], r["units_cap"]) for r in caps][-2:] == [(2, 2), (1, 2)]


async def test_youtube_default_cap_is_90_calls_a_day(people):
    ws, _owner = await people.workspace()
    noon = datetime(2026, 12, 1, 12, tzinfo=UTC)
    granted = [
        (await services.reserve_ledger(ws, "youtube", YT, now=noon)).units for _ in range(91)
    ]
    assert sum(granted) == 90
    assert granted[-1] == 0


async def test_x_spend_stops_exactly_at_the_cap_and_unread_posts_are_given_back(people):
    ws, _owner = await people.workspace()
    await services.set_ledger_cap(ws, "x", 100)
    now = datetime(2026, 12, 1, 12, tzinfo=UTC)
    grants = []
    for _ in range(4):
        grant = await services.reserve_ledger(ws, "x", X, wanted=40, now=now)
        grants.append(grant.units)
        await services.settle_ledger(ws, "x", X, grant, grant.units)  # read all it asked for
    assert grants == [40, 40, 20, 0]
    used = await db.fetchval(
        "SELECT units_used FROM provider_budget_ledger WHERE workspace_id = $1 AND provider = 'x'",
        ws,
    )
    assert used == 100

    # A call that read fewer posts than it reserved gives the rest back.
    await services.set_ledger_cap(ws, "x", 140)
    grant = await services.reserve_ledger(ws, "x", X, wanted=40, now=now)
    assert grant.units == 40
    await services.settle_ledger(ws, "x", X, grant, 3)
    assert (await services.reserve_ledger(ws, "x", X, wanted=40, now=now)).units == 37


async def test_x_never_asks_for_fewer_posts_than_the_api_allows(people):
    ws, _owner = await people.workspace()
    await services.set_ledger_cap(ws, "x", 15)
    now = datetime(2026, 12, 1, 12, tzinfo=UTC)
    assert (await services.reserve_ledger(ws, "x", X, wanted=40, now=now)).units == 15
    await services.set_ledger_cap(ws, "x", 24)  # 9 left: below X's max_results minimum of 10
    assert (await services.reserve_ledger(ws, "x", X, wanted=40, now=now)).units == 0


def test_rolling_slots_count_distinct_hashtags_for_seven_days_from_first_use():
    start = datetime(2026, 11, 1, tzinfo=UTC)
    uses = {f"tag{i}": start + timedelta(hours=i) for i in range(30)}
    now = start + timedelta(days=3)
    # A hashtag used within the window is free and keeps its first use's timer.
    again = rolling_slot(uses, "tag5", cap=30, window=WEEK, now=now)
    assert again.allowed
    assert not again.new_use
    assert again.frees_at == uses["tag5"] + WEEK
    # A 31st hashtag waits until the oldest use is 7 days old.
    full = rolling_slot(uses, "new", cap=30, window=WEEK, now=now)
    assert not full.allowed
    assert full.frees_at == start + WEEK
    # ... and then it takes that slot.
    later = rolling_slot(uses, "new", cap=30, window=WEEK, now=start + WEEK)
    assert later.allowed
    assert later.new_use
    # The boundary: exactly 7 days after first use the slot is free (a use lasts [t, t+7d)).
    just_before = rolling_slot(
        uses, "new", cap=30, window=WEEK, now=start + WEEK - timedelta(seconds=1)
    )
    assert not just_before.allowed


async def test_instagram_hashtags_take_a_slot_once_and_the_31st_is_rate_limited(people):
    ws, _owner = await people.workspace()
    start = datetime(2026, 11, 1, 9, tzinfo=UTC)
    for i in range(30):
        grant = await services.reserve_ledger(
            ws, "instagram", IG, subject=f"tag{i}", now=start + timedelta(hours=i)
        )
        assert grant.units == 1
    later = start + timedelta(days=2)
    assert (
        await services.reserve_ledger(ws, "instagram", IG, subject="tag0", now=later)
    ).units == 1
    refused = await services.reserve_ledger(ws, "instagram", IG, subject="tag30", now=later)
    assert refused.units == 0
    assert refused.state == SourceState.RATE_LIMITED
    assert refused.frees_at == start + WEEK  # tag0's first use, not its repeat, sets the time
    assert "2026-11-08 09:00" in refused.reason
    # Once tag0's week is over, tag30 takes its slot; tag0 would now count anew.
    freed = await services.reserve_ledger(ws, "instagram", IG, subject="tag30", now=start + WEEK)
    assert freed.units == 1
    again = await services.reserve_ledger(ws, "instagram", IG, subject="tag0", now=start + WEEK)
    assert again.units == 0
