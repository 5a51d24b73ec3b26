"""Row-level security: the second line behind every `WHERE workspace_id = $1`.

The app connects as a role that owns nothing; every table with a workspace_id
column has the `workspace_isolation` policy on `app.workspace_id`, which
`db.workspace_tx` sets. docs/decisions/database.md.
"""

from __future__ import annotations

import asyncpg
import pytest

from app.accounts import services as account_services
from app.core import db
from app.topics import queries as topic_queries
from app.topics import services as topics
from app.topics.types import TopicForm, TopicSummary
from tests.factories import sign_in
from tests.fixtures import as_owner

WORKSPACE_TABLES = """
SELECT c.relname AS name, c.relrowsecurity AS enabled, c.relforcerowsecurity AS forced,
       EXISTS (SELECT 1 FROM pg_policy p
               WHERE p.polrelid = c.oid AND p.polname = 'workspace_isolation') AS policy
FROM pg_class c
JOIN pg_namespace n ON n.oid = c.relnamespace
JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname = 'workspace_id' AND NOT a.attisdropped
WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p')
  AND c.relname <> ALL($1::text[])
ORDER BY c.relname
"""


async def test_every_table_with_a_workspace_id_has_the_policy(clean_db):
    """A new workspace table must call newsdesk_isolate_workspace in its migration."""
    tables = await db.fetch(WORKSPACE_TABLES, list(db.PRIVATE_TABLES))
    assert {"articles", "memberships", "topics", "events"} <= {t["name"] for t in tables}
    unprotected = [t["name"] for t in tables if not (t["enabled"] and t["forced"] and t["policy"])]
    assert unprotected == [], "add SELECT newsdesk_isolate_workspace('<table>'); to the migration"
    assert await db.unprotected_tables(db.engine()) == []


async def test_the_app_may_not_touch_the_private_tables(clean_db):
    """The search index has no row security (m0024): only its SECURITY DEFINER functions
    read it, so the app's role must have no grant on it - nor on Piccolo's ledger."""
    for table in db.PRIVATE_TABLES:
        with pytest.raises(asyncpg.InsufficientPrivilegeError, match="permission denied"):
            await db.fetch(f'SELECT * FROM "{table}"')


async def test_a_workspace_table_without_the_policy_is_found(clean_db):
    await as_owner("CREATE TABLE careless (id bigserial PRIMARY KEY, workspace_id bigint)")
    try:
        assert await db.unprotected_tables(db.engine()) == ["careless"]
        await as_owner("SELECT newsdesk_isolate_workspace('careless')")
        assert await db.unprotected_tables(db.engine()) == []
    finally:
        await as_owner("DROP TABLE careless")


async def test_the_app_connects_as_a_role_that_owns_nothing_and_bypasses_nothing(clean_db):
    me = await db.fetchrow(
        "SELECT rolname, rolsuper, rolbypassrls FROM pg_roles WHERE rolname = current_user"
    )
    assert me is not None
    assert (me["rolsuper"], me["rolbypassrls"]) == (False, False)
    owned = await db.fetchval(
        "SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
        "WHERE n.nspname = current_schema() AND pg_get_userbyid(c.relowner) = current_user"
    )
    assert owned == 0


async def _two_workspaces(people) -> tuple[int, int]:
    mine, _ = await people.workspace("Mine")
    theirs, _ = await people.workspace("Theirs")
    for workspace_id, name in ((mine, "Floods"), (theirs, "Elections")):
        await topics.create_topic(workspace_id, TopicForm(name), actor_user_id=None)
    return mine, theirs


async def test_a_query_that_forgets_its_workspace_filter_sees_only_its_workspace(people):
    mine, theirs = await _two_workspaces(people)
    async with db.workspace_tx(mine) as tx:
        names = [r["name"] for r in await tx.fetch("SELECT name FROM topics")]
        members = {r["workspace_id"] for r in await tx.fetch("SELECT * FROM memberships")}
        events = {r["workspace_id"] for r in await tx.fetch("SELECT * FROM events")}
    assert names == ["Floods"]
    assert members == {mine}
    assert events <= {mine}
    # Nothing of theirs in any workspace table, whatever the query.
    for table in await db.fetch(WORKSPACE_TABLES, list(db.PRIVATE_TABLES)):
        async with db.workspace_tx(mine) as tx:
            leaked = await tx.fetchval(
                f'SELECT count(*) FROM "{table["name"]}" WHERE workspace_id = $1', theirs
            )
        assert leaked == 0, table["name"]


async def test_a_bound_transaction_cannot_write_into_another_workspace(people):
    mine, theirs = await _two_workspaces(people)
    with pytest.raises(asyncpg.InsufficientPrivilegeError, match="row-level security"):
        async with db.workspace_tx(mine) as tx:
            await tx.execute("INSERT INTO topics (workspace_id, name) VALUES ($1, 'Spy')", theirs)
    with pytest.raises(asyncpg.InsufficientPrivilegeError, match="row-level security"):
        async with db.workspace_tx(mine) as tx:
            await tx.execute("UPDATE topics SET workspace_id = $1", theirs)
    async with db.workspace_tx(mine) as tx:
        assert await tx.execute("DELETE FROM topics WHERE workspace_id = $1", theirs) == "DELETE 0"
    assert await db.fetchval("SELECT count(*) FROM topics") == 2


async def test_removing_a_member_detaches_their_sessions_in_that_workspace_only(people):
    """A bound transaction may let a session go (workspace_id NULL), not move it."""
    mine, _theirs = await _two_workspaces(people)
    person = await people.member("editor", mine)
    session = await account_services.start_session(person.user_id)
    assert session.workspace_id == mine
    await account_services.remove_member(mine, person.user_id, actor_user_id=person.user_id)
    row = await db.fetchrow("SELECT workspace_id FROM sessions WHERE user_id = $1", person.user_id)
    assert row is not None
    assert row["workspace_id"] is None


async def test_unbound_system_work_sees_every_workspace(people):
    """Claims, reconcilers and sign-in run unbound, on purpose."""
    mine, theirs = await _two_workspaces(people)
    rows = await db.fetch("SELECT DISTINCT workspace_id FROM topics")
    assert {r["workspace_id"] for r in rows} == {mine, theirs}


async def test_tables_the_owner_adds_later_are_granted_to_the_app(clean_db):
    """Default privileges: a later migration's table needs no GRANT of its own."""
    await as_owner("CREATE TABLE later_things (id bigserial PRIMARY KEY, name text)")
    try:
        await db.fetchval("INSERT INTO later_things (name) VALUES ('x') RETURNING id")
        assert await db.fetchval("SELECT count(*) FROM later_things") == 1
    finally:
        await as_owner("DROP TABLE later_things")


async def test_reads_bound_to_a_workspace_see_only_it(people):
    mine, _theirs = await _two_workspaces(people)
    with db.bound_to(mine):
        names = [r["name"] for r in await db.fetch("SELECT name FROM topics")]
        with db.system():
            everyone = await db.fetchval("SELECT count(DISTINCT workspace_id) FROM topics")
    assert names == ["Floods"]
    assert everyone == 2


async def test_a_page_whose_query_forgets_the_workspace_shows_only_the_viewers(
    people, client, monkeypatch
):
    """Requests are bound to the viewer's workspace: a careless query leaks nothing."""
    mine, _theirs = await _two_workspaces(people)
    me = await people.member("editor", mine)

    async def careless_topics(workspace_id: int) -> list[TopicSummary]:
        rows = await db.fetch("SELECT id, name, description FROM topics ORDER BY name")
        return [TopicSummary(r["id"], r["name"], r["description"], 0, 0, None, 0) for r in rows]

    monkeypatch.setattr(topic_queries, "topics", careless_topics)
    await sign_in(client, me.email)
    page = await client.get("/topics")
    assert page.status_code == 200
    assert "Floods" in page.text
    assert "Elections" not in page.text
