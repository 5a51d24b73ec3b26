"""The wall's JSON API: permissions per endpoint, validation, cursors, seeding, imports, secrets."""

from __future__ import annotations

import asyncio
import json

import pytest

from app.accounts import services as accounts
from app.core import db
from app.streams import polling, services
from tests.streams.conftest import make_due, sources_of
from tests.streams.statuses import status, statuses_reply

KEYWORD = {
    "type": "keyword",
    "title": "Acampada",
    "spec": {
        "query": "acampada #acampada26",
        "platforms": ["mastodon", "tiktok"],
        "instances": ["social.example"],
    },
}


async def api(people, role: str = "editor", workspace_id: int | None = None):  # type: ignore[no-untyped-def]
    person = await people.member(role, workspace_id)
    token = await accounts.issue_api_token(person.workspace_id, person.user_id, "bot")
    return person, {"Authorization": f"Bearer {token}"}


async def home_column(ws: int, handle: str = "desk", secret: str = "tok") -> tuple[int, int]:
    connection = await services.add_connection(
        ws, "mastodon", handle, instance="social.example", secret=secret
    )
    column = await services.create_column(
        ws,
        {"type": "platform_feed", "title": f"Home {handle}", "spec": {"connection_id": connection}},
        actor_user_id=None,
    )
    return connection, column


# Who may do what ----------------------------------------------------------------------------

ENDPOINTS = [
    # (method, path, body, the least role allowed)
    ("GET", "/api/v1/feeds", None, "viewer"),
    ("GET", "/api/v1/feeds/columns", None, "viewer"),
    ("GET", "/api/v1/feeds/columns/{column}/items", None, "viewer"),
    ("GET", "/api/v1/feeds/connections", None, "viewer"),
    ("GET", "/api/v1/feeds/platforms", None, "viewer"),
    ("POST", "/api/v1/feeds/columns", KEYWORD, "editor"),
    ("PATCH", "/api/v1/feeds/columns/{column}", {"title": "Renamed"}, "editor"),
    ("POST", "/api/v1/feeds/columns/reorder", {"ordered_ids": ["{column}"]}, "editor"),
    ("POST", "/api/v1/feeds/columns/import-saved-searches", {"terms": ["flood"]}, "editor"),
    ("POST", "/api/v1/feeds/columns/{column}/refresh", None, "editor"),
    ("DELETE", "/api/v1/feeds/columns/{column}", None, "editor"),
    ("GET", "/api/v1/feeds/credentials", None, "admin"),
    ("PUT", "/api/v1/feeds/credentials/youtube", {"secret": "k"}, "admin"),
    ("DELETE", "/api/v1/feeds/credentials/youtube", None, "admin"),
    ("PUT", "/api/v1/feeds/budgets/youtube", {"cap": 10}, "admin"),
    ("DELETE", "/api/v1/feeds/connections/{connection}", None, "admin"),
]
RANK = {"viewer": 0, "editor": 1, "admin": 2}


@pytest.mark.parametrize(("method", "path", "body", "least"), ENDPOINTS, ids=lambda v: str(v)[:40])
@pytest.mark.parametrize("role", ["viewer", "editor", "admin"])
async def test_each_endpoint_admits_exactly_the_roles_it_should(
    client, people, statuses, method, path, body, least, role
):
    person, auth = await api(people, role)
    connection, column = await home_column(person.workspace_id)
    url = path.format(column=column, connection=connection)
    if body is not None:
        body = json.loads(json.dumps(body).replace('"{column}"', str(column)))
    response = await client.request(method, url, json=body, headers=auth)
    allowed = RANK[role] >= RANK[least]
    assert (response.status_code < 400) is allowed, response.text
    if not allowed:
        assert response.status_code == 403


async def test_without_a_token_the_api_answers_401(client):
    assert (await client.get("/api/v1/feeds/columns")).status_code == 401


async def test_another_workspaces_column_is_not_found(client, people, statuses):
    _person, auth = await api(people)
    other, _ = await people.workspace()
    _connection, theirs = await home_column(other)
    for method, path in [
        ("GET", f"/api/v1/feeds/columns/{theirs}/items"),
        ("PATCH", f"/api/v1/feeds/columns/{theirs}"),
        ("POST", f"/api/v1/feeds/columns/{theirs}/refresh"),
        ("DELETE", f"/api/v1/feeds/columns/{theirs}"),
    ]:
        response = await client.request(method, path, json={"title": "x"}, headers=auth)
        assert response.status_code == 404, (method, path, response.text)


# Columns ------------------------------------------------------------------------------------


async def test_creating_a_keyword_column_resolves_sources_and_names_unsupported_platforms(
    client, people, statuses
):
    _person, auth = await api(people)
    response = await client.post("/api/v1/feeds/columns", json=KEYWORD, headers=auth)
    assert response.status_code == 201, response.text
    column = response.json()
    assert [(s["provider"], s["source_kind"], s["query"]) for s in column["sources"]] == [
        ("mastodon", "search", "acampada26@social.example")
    ]
    unsupported = {u["platform"]: u["reason"] for u in column["unsupported_platforms"]}
    assert set(unsupported) == {"tiktok"}
    assert column["aggregate_state"] == "pending"
    assert column["effective_interval_ms"] == 120_000
    assert "unsupported_platforms" not in column["spec"]


async def test_an_invalid_column_is_a_422_naming_each_field_and_is_not_stored(client, people):
    _person, auth = await api(people)
    response = await client.post(
        "/api/v1/feeds/columns",
        json={"type": "keyword", "title": "", "spec": {"query": "a\x00", "platforms": ["orkut"]}},
        headers=auth,
    )
    assert response.status_code == 422
    assert set(response.json()["errors"]) == {"title", "spec.query", "spec.platforms"}
    assert await db.fetchval("SELECT count(*) FROM stream_columns") == 0
    broken = await client.post(
        "/api/v1/feeds/columns",
        content=b"{not json",
        headers={**auth, "Content-Type": "application/json"},
    )
    assert broken.status_code == 400


async def test_a_platform_feed_needs_a_connection_of_this_workspace(client, people, statuses):
    _person, auth = await api(people)
    other, _ = await people.workspace()
    theirs, _column = await home_column(other)
    response = await client.post(
        "/api/v1/feeds/columns",
        json={"type": "platform_feed", "title": "Theirs", "spec": {"connection_id": theirs}},
        headers=auth,
    )
    assert response.status_code == 422
    assert "spec.connection_id" in response.json()["errors"]


async def test_refresh_policies_are_clamped_and_reported(client, people, statuses):
    _person, auth = await api(people)
    made = await client.post(
        "/api/v1/feeds/columns",
        json={**KEYWORD, "refresh_policy": {"interval_ms": 5_000}},
        headers=auth,
    )
    column = made.json()
    assert column["refresh_policy"]["interval_ms"] == 5_000  # as asked
    assert column["effective_interval_ms"] == 60_000  # as done
    slow = await client.patch(
        f"/api/v1/feeds/columns/{column['id']}",
        json={"refresh_policy": {"interval_ms": 99_000_000}},
        headers=auth,
    )
    assert slow.json()["effective_interval_ms"] == 3_600_000
    assert slow.json()["sources"][0]["interval_ms"] == 3_600_000


async def test_columns_can_be_renamed_moved_reordered_and_deleted(client, people, statuses):
    _person, auth = await api(people)
    ids = []
    for title in ("One", "Two", "Three"):
        made = await client.post(
            "/api/v1/feeds/columns", json={**KEYWORD, "title": title}, headers=auth
        )
        ids.append(made.json()["id"])
    moved = await client.patch(
        f"/api/v1/feeds/columns/{ids[2]}", json={"position": 0, "title": "Third"}, headers=auth
    )
    assert (moved.json()["title"], moved.json()["position"]) == ("Third", 0)
    listing = (await client.get("/api/v1/feeds/columns", headers=auth)).json()["columns"]
    assert [c["id"] for c in listing] == [ids[2], ids[0], ids[1]]

    reordered = await client.post(
        "/api/v1/feeds/columns/reorder", json={"ordered_ids": ids}, headers=auth
    )
    assert [c["id"] for c in reordered.json()["columns"]] == ids
    incomplete = await client.post(
        "/api/v1/feeds/columns/reorder", json={"ordered_ids": ids[:2]}, headers=auth
    )
    assert incomplete.status_code == 422

    assert (await client.delete(f"/api/v1/feeds/columns/{ids[0]}", headers=auth)).status_code == 204
    listing = (await client.get("/api/v1/feeds/columns", headers=auth)).json()["columns"]
    assert [(c["id"], c["position"]) for c in listing] == [(ids[1], 0), (ids[2], 1)]
    # The shared source stays active: other columns still need it.
    [source] = {s["id"] for c in listing for s in c["sources"]}
    assert await db.fetchval("SELECT active FROM stream_sources WHERE id = $1", source)


async def test_a_source_nobody_needs_stops_polling(client, people, statuses):
    _person, auth = await api(people)
    made = (await client.post("/api/v1/feeds/columns", json=KEYWORD, headers=auth)).json()
    [source] = [s["id"] for s in made["sources"]]
    await client.delete(f"/api/v1/feeds/columns/{made['id']}", headers=auth)
    assert not await db.fetchval("SELECT active FROM stream_sources WHERE id = $1", source)
    assert await polling.run_due(seconds=2, jitter=0) == 0


# Items and cursors --------------------------------------------------------------------------


async def test_column_pages_are_stable_while_new_items_arrive(client, people, site, statuses):
    person, auth = await api(people)
    _connection, column = await home_column(person.workspace_id)
    [source] = await sources_of(column)
    site.routes["/api/v1/timelines/home"] = statuses_reply([status(n) for n in range(1, 6)])
    await polling.poll_source(person.workspace_id, source, jitter=0)

    first = (await client.get(f"/api/v1/feeds/columns/{column}/items?limit=2", headers=auth)).json()
    assert [i["remote_id"] for i in first["items"]] == ["1001", "1002"]

    # Newer posts arrive, and one with the very same time as the page's last item.
    site.routes["/api/v1/timelines/home"] = statuses_reply(
        [status(0), status(-1), status(99, minutes=2)]
    )
    await make_due(source)
    await polling.poll_source(person.workspace_id, source, jitter=0)

    seen = [i["remote_id"] for i in first["items"]]
    cursor = first["next_cursor"]
    while cursor:
        page = (
            await client.get(
                f"/api/v1/feeds/columns/{column}/items",
                params={"cursor": cursor, "limit": 2},
                headers=auth,
            )
        ).json()
        seen += [i["remote_id"] for i in page["items"]]
        cursor = page["next_cursor"]
    assert len(seen) == len(set(seen))
    assert {"1003", "1004", "1005"} <= set(seen)
    assert "1000" not in seen
    assert "999" not in seen


async def test_items_carry_the_ast_and_only_proxied_media(client, people, site, statuses):
    person, auth = await api(people)
    _connection, column = await home_column(person.workspace_id)
    [source] = await sources_of(column)
    site.routes["/api/v1/timelines/home"] = statuses_reply([status(1)])
    await polling.poll_source(person.workspace_id, source, jitter=0)
    body = (await client.get(f"/api/v1/feeds/columns/{column}/items", headers=auth)).json()
    [item] = body["items"]
    assert item["content"]["type"] == "document"
    assert item["media"][0]["proxy_url"].startswith("/media/")
    assert "social.example/media" not in json.dumps(item["media"])
    assert "<script" not in json.dumps(item)
    assert body["meta"]["aggregate_state"] == "ready"
    assert body["meta"]["sources"][0]["state"] == "ready"


async def test_bad_cursors_and_limits_are_400s(client, people, statuses):
    person, auth = await api(people)
    _connection, column = await home_column(person.workspace_id)
    for query in ("cursor=nonsense", "limit=0", "limit=201", "limit=ten"):
        response = await client.get(f"/api/v1/feeds/columns/{column}/items?{query}", headers=auth)
        assert response.status_code == 400, query


async def test_refresh_answers_202_with_the_effective_next_poll(client, people, statuses):
    person, auth = await api(people)
    _connection, column = await home_column(person.workspace_id)
    response = await client.post(f"/api/v1/feeds/columns/{column}/refresh", headers=auth)
    assert response.status_code == 202
    assert response.json()["effective_next_poll_at"] is not None


# The merged view, seeding, imports, secrets ----------------------------------------------------


async def test_the_merged_view_lists_home_items_with_connections_and_columns(
    client, people, site, statuses
):
    person, auth = await api(people)
    await services.add_connection(
        person.workspace_id, "mastodon", "desk", instance="social.example", secret="tok-secret"
    )
    site.routes["/api/v1/timelines/home"] = statuses_reply([status(1), status(2)])
    first = (await client.get("/api/v1/feeds", headers=auth)).json()  # seeds the column
    assert [c["type"] for c in first["meta"]["columns"]] == ["platform_feed"]
    await polling.run_due(seconds=5, jitter=0)
    merged = await client.get("/api/v1/feeds", headers=auth)
    body = merged.json()
    assert [i["remote_id"] for i in body["items"]] == ["1001", "1002"]
    [connection] = body["meta"]["connections"]
    assert connection["configured"] is True
    assert "home" in connection["capabilities"]
    assert "tok-secret" not in merged.text


async def test_seeding_is_lazy_and_concurrent_listings_make_one_column_per_connection(
    client, people, statuses
):
    person, auth = await api(people)
    for handle in ("desk", "tips"):
        await services.add_connection(
            person.workspace_id, "mastodon", handle, instance="social.example"
        )
    responses = await asyncio.gather(
        *(client.get("/api/v1/feeds/columns", headers=auth) for _ in range(6))
    )
    assert all(r.status_code == 200 for r in responses)
    assert await db.fetchval("SELECT count(*) FROM stream_columns") == 2
    titles = [c["title"] for c in responses[-1].json()["columns"]]
    assert titles == ["desk", "tips"]  # a name that is the handle is said once
    # A deleted seeded column is not brought back.
    await client.delete(
        f"/api/v1/feeds/columns/{responses[-1].json()['columns'][0]['id']}", headers=auth
    )
    again = (await client.get("/api/v1/feeds/columns", headers=auth)).json()["columns"]
    assert [c["title"] for c in again] == ["tips"]


async def test_importing_saved_searches_is_idempotent_and_rate_limited(client, people, statuses):
    _person, auth = await api(people)
    url = "/api/v1/feeds/columns/import-saved-searches"
    first = await client.post(url, json={"terms": ["#flood", "#Flood ", "#fire"]}, headers=auth)
    assert first.status_code == 200
    assert [c["title"] for c in first.json()["columns"]] == ["#flood", "#fire"]
    assert all(c["type"] == "saved_search" for c in first.json()["columns"])
    second = await client.post(url, json={"terms": ["#flood", "#fire"]}, headers=auth)
    assert second.json()["columns"] == []
    assert await db.fetchval("SELECT count(*) FROM stream_columns") == 2
    statuses_seen = [
        (await client.post(url, json={"terms": []}, headers=auth)).status_code for _ in range(4)
    ]
    assert statuses_seen[-1] == 429
    _other, other_auth = await api(people)
    bad = await client.post(url, json={"terms": "flood"}, headers=other_auth)
    assert bad.status_code == 422


async def test_workspace_keys_are_sealed_and_only_ever_reported_as_configured(client, people):
    _person, auth = await api(people, "admin")
    response = await client.put(
        "/api/v1/feeds/credentials/youtube",
        json={"secret": "AIza-secret-key", "label": "Desk key"},
        headers=auth,
    )
    assert response.status_code == 200
    listing = await client.get("/api/v1/feeds/credentials", headers=auth)
    youtube = next(c for c in listing.json()["credentials"] if c["provider"] == "youtube")
    assert youtube == {"provider": "youtube", "label": "Desk key", "configured": True}
    assert "AIza-secret-key" not in listing.text + response.text
    sealed = await db.fetchval("SELECT sealed FROM stream_credentials")
    assert b"AIza-secret-key" not in sealed
    unknown = await client.put(
        "/api/v1/feeds/credentials/orkut", json={"secret": "x"}, headers=auth
    )
    assert unknown.status_code == 422


async def test_a_key_for_an_unknown_platform_names_the_platforms_that_take_one(client, people):
    _person, auth = await api(people, "admin")
    url = "/api/v1/feeds/credentials"
    for provider, body in [
        ("orkut", None),
        ("orkut", {"secret": 7}),
        ("mastodon", {"secret": "k"}),
    ]:
        response = await client.put(f"{url}/{provider}", json=body, headers=auth)
        assert response.status_code == 422, provider
        detail = response.json()["detail"]
        assert detail == (
            f"Unknown platform '{provider}'; choose from bluesky, youtube, x, instagram."
        ), detail
    assert await db.fetchval("SELECT count(*) FROM stream_credentials") == 0
    known = await client.put(f"{url}/youtube", json={"secret": 7}, headers=auth)
    assert (known.status_code, known.json()["detail"]) == (422, "Send the key as a string.")


async def test_concurrent_imports_make_each_column_once_and_a_bad_term_imports_nothing(
    client, people, statuses
):
    person, auth = await api(people)
    others = [await api(people, "editor", person.workspace_id) for _ in range(3)]
    url = "/api/v1/feeds/columns/import-saved-searches"
    responses = await asyncio.gather(
        *(client.post(url, json={"terms": ["#flood", "#fire"]}, headers=h) for _p, h in others)
    )
    assert all(r.status_code == 200 for r in responses)
    assert await db.fetchval("SELECT count(*) FROM stream_columns") == 2
    bad = await client.post(url, json={"terms": ["#storm", "x" * 201]}, headers=auth)
    assert bad.status_code == 422
    assert "terms[1]" in bad.json()["errors"]
    assert await db.fetchval("SELECT count(*) FROM stream_columns") == 2
