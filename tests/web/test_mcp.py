"""The MCP endpoint, driven by the `mcp` SDK's own client against a real server process."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from app.accounts import services as accounts
from app.analysis.services import Run, run_analysis
from app.articles.services import process_scraped_article
from app.articles.types import Warning
from app.core import config
from app.imports import queries as import_queries
from app.imports import services as import_services
from tests.articles.helpers import article_event

ROOT = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def mcp_server(
    settings: config.Settings, database: None, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """`python -m app serve` on this worker's database and Redis, started once: each test
    cleans them (`server_url`), as the browser suite does around its one server. A server per
    test was nine start-ups a run - ~1.6 s of CPU each, importing the app - and on two cores
    busy with the other worker's tests one could take longer than the wait for it."""
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    env = {
        **os.environ,
        "DATABASE_URL": settings.database_url,
        "REDIS_URL": settings.redis_url,
        "REDIS_PREFIX": settings.redis_prefix,
        "SECRET_KEY": settings.secret_key.get_secret_value(),
        "BASE_URL": base,
        "PORT": str(port),
        "LOG_LEVEL": "WARNING",
    }
    log = tmp_path_factory.mktemp("mcp") / "server.log"
    process = subprocess.Popen(
        [sys.executable, "-m", "app", "serve"],
        cwd=ROOT,
        env=env,
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            assert process.poll() is None, f"the server exited:\n{log.read_text()[-3000:]}"
            try:
                if httpx.get(base + "/readyz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, f"the server did not start:\n{log.read_text()}"
            time.sleep(0.1)
        yield base + "/mcp"
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)


@pytest.fixture
def server_url(mcp_server: str, services: None) -> str:
    """The MCP endpoint, on clean PostgreSQL and Redis."""
    return mcp_server


async def token_of(people, role: str) -> tuple[str, int]:  # type: ignore[no-untyped-def]
    person = await people.member(role)
    token = await accounts.issue_api_token(person.workspace_id, person.user_id, "assistant")
    return token, person.workspace_id


def connect(url: str, token: str) -> Client:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30)
    return Client(streamable_http_client(url, http_client=http))


def answer(result: Any) -> Any:
    """A tool result's JSON: the structured content, else its text."""
    if result.structured_content is not None:
        content = result.structured_content
        return content.get("result", content) if set(content) == {"result"} else content
    return json.loads(result.content[0].text)


@pytest.fixture
async def editor_token(people) -> tuple[str, int]:  # type: ignore[no-untyped-def]
    return await token_of(people, "editor")


async def test_an_assistant_imports_links_and_follows_the_job(server_url, editor_token):
    token, workspace_id = editor_token
    async with connect(server_url, token) as client:
        tools = {t.name for t in (await client.list_tools()).tools}
        assert tools == {
            "import_articles_from_urls",
            "get_import_job",
            "search_library",
            "get_article",
            "fetch_article_again",
        }
        created = answer(
            await client.call_tool(
                "import_articles_from_urls",
                {"urls": ["https://news.example/a", "https://news.example/b", "ftp://x.example/"]},
            )
        )
        assert created["total_urls"] == 2
        assert [i["url"] for i in created["invalid"]] == ["ftp://x.example/"]
        job = answer(await client.call_tool("get_import_job", {"job_id": created["job_id"]}))
        assert job["status"] == "queued"
        assert [i["url"] for i in job["items"]] == [
            "https://news.example/a",
            "https://news.example/b",
        ]
    view = await import_queries.job(workspace_id, created["job_id"])
    assert view is not None
    assert view.source == "api"


async def test_an_assistant_searches_and_reads_plain_text(server_url, editor_token):
    token, workspace_id = editor_token
    stored = await process_scraped_article(
        workspace_id, article_event("https://news.example/tram", title="Tram budget approved")
    )
    async with connect(server_url, token) as client:
        found = answer(await client.call_tool("search_library", {"query": "tram", "limit": 5}))
        assert [a["id"] for a in found] == [stored.article_id]
        article = answer(await client.call_tool("get_article", {"id": stored.article_id}))
    assert article["title"] == "Tram budget approved"
    assert "night buses" in article["text"]
    assert "<" not in article["text"]
    assert article["analysis"]["status"] in ("pending", "running", "completed")


async def test_an_assistant_fetches_a_consent_walled_article_again(
    server_url, people, editor_token
):
    token, workspace_id = editor_token
    walled = await process_scraped_article(
        workspace_id,
        article_event("https://news.example/walled", warnings=(Warning.CONSENT_WALL,)),
    )
    plain = await process_scraped_article(workspace_id, article_event("https://news.example/p"))
    assert walled.article_id
    assert await run_analysis(workspace_id, walled.article_id, config.active()) == Run.NOT_ANALYSED
    viewer_token, _workspace = await token_of(people, "viewer")
    async with connect(server_url, token) as client:
        read = answer(await client.call_tool("get_article", {"id": walled.article_id}))
        started = answer(
            await client.call_tool("fetch_article_again", {"article_id": walled.article_id})
        )
        job = answer(await client.call_tool("get_import_job", {"job_id": started["job_id"]}))
        refused = await client.call_tool("fetch_article_again", {"article_id": plain.article_id})
        missing = await client.call_tool("fetch_article_again", {"article_id": 987654321})
    # The wall's text is not passed off as analysed: no summary, and why.
    assert (read["analysis"]["status"], read["analysis"]["summary"]) == ("skipped", "")
    assert "consent wall" in read["analysis"]["error"]
    assert started["article_id"] == walled.article_id
    assert (job["source"], job["total_urls"]) == ("fetch-again", 1)
    assert [(i["url"], i["article_id"]) for i in job["items"]] == [
        ("https://news.example/walled", walled.article_id)
    ]
    assert refused.is_error
    assert "consent wall" in refused.content[0].text
    assert missing.is_error
    assert "no article 987654321" in missing.content[0].text
    async with connect(server_url, viewer_token) as client:
        other = await client.call_tool("fetch_article_again", {"article_id": walled.article_id})
    assert other.is_error  # a viewer of another workspace: the role, before any lookup
    assert "role" in other.content[0].text


async def test_the_tokens_role_applies(server_url, people):
    token, _workspace = await token_of(people, "viewer")
    async with connect(server_url, token) as client:
        refused = await client.call_tool(
            "import_articles_from_urls", {"urls": ["https://news.example/a"]}
        )
        assert refused.is_error
        assert "role" in refused.content[0].text
        assert not (await client.call_tool("search_library", {"query": "x"})).is_error


async def test_every_role_follows_a_job_and_editors_and_up_start_one(server_url, people):
    """The rule of the pages and the API (app.imports.access): every member reads a job;
    starting one (and fetching an article again) needs articles.import."""
    for role in ("owner", "admin", "editor", "viewer"):
        token, workspace_id = await token_of(people, role)
        job_id = await import_services.create_job(
            workspace_id, ["https://news.example/a"], actor_user_id=None
        )
        async with connect(server_url, token) as client:
            job = await client.call_tool("get_import_job", {"job_id": job_id})
            started = await client.call_tool(
                "import_articles_from_urls", {"urls": ["https://news.example/b"]}
            )
            again = await client.call_tool("fetch_article_again", {"article_id": 1})
        assert not job.is_error, role
        assert [i["url"] for i in answer(job)["items"]] == ["https://news.example/a"], role
        if role == "viewer":
            for refused in (started, again):
                assert refused.is_error
                assert refused.content[0].text.endswith(
                    ": Your role in this workspace lets you follow imports, not start or change them."
                )
        else:
            assert not started.is_error, role
            assert answer(started)["total_urls"] == 1


async def test_a_listed_word_is_invalid_not_left_out(server_url, editor_token):
    """An assistant's list has no prose: an entry that is no web address is reported."""
    token, _workspace = editor_token
    async with connect(server_url, token) as client:
        created = answer(
            await client.call_tool(
                "import_articles_from_urls", {"urls": ["https://news.example/a", "hello"]}
            )
        )
    assert created["total_urls"] == 1
    assert created["invalid"] == [
        {"url": "hello", "reason": "This is not a web address (http or https)."}
    ]


async def test_another_workspaces_job_is_not_found(server_url, people, editor_token):
    token, _workspace = editor_token
    other_token, _other = await token_of(people, "editor")
    async with connect(server_url, other_token) as client:
        theirs = answer(
            await client.call_tool("import_articles_from_urls", {"urls": ["https://z.example/1"]})
        )
    async with connect(server_url, token) as client:
        result = await client.call_tool("get_import_job", {"job_id": theirs["job_id"]})
        assert result.is_error


async def test_no_token_no_entry(server_url):
    async with httpx.AsyncClient() as http:
        response = await http.post(server_url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert response.status_code == 401
    assert response.headers["www-authenticate"].startswith("Bearer")


async def test_another_host_is_told_which_address_and_setting_work(server_url, editor_token):
    """A client set up with another name for the server (or a proxy before a server whose
    BASE_URL was left at its default) learns what to change, not "Invalid Host header"."""
    token, _workspace = editor_token
    other = server_url.replace("127.0.0.1", "localhost")
    async with httpx.AsyncClient() as http:
        response = await http.post(
            other,
            json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
            headers={"Authorization": f"Bearer {token}", "Accept": "application/json"},
        )
    assert response.status_code == 421
    detail = response.json()["detail"]
    assert server_url in detail
    assert "BASE_URL" in detail
    assert "localhost:" in detail


async def test_more_than_fifty_urls_are_refused(server_url, editor_token):
    token, _workspace = editor_token
    async with connect(server_url, token) as client:
        result = await client.call_tool(
            "import_articles_from_urls", {"urls": [f"https://a.example/{n}" for n in range(51)]}
        )
    assert result.is_error


async def test_odd_arguments_get_a_readable_answer_never_an_internal_error(
    server_url, editor_token
):
    token, _workspace = editor_token
    odd_calls = [
        ("get_import_job", {"job_id": 99999999999999999999}),
        ("get_import_job", {"job_id": -1}),
        ("get_article", {"id": 99999999999999999999}),
        ("fetch_article_again", {"article_id": 99999999999999999999}),
        ("fetch_article_again", {"article_id": 0}),
        ("search_library", {"query": "flood\x00s"}),
        ("import_articles_from_urls", {"urls": ["https://a.example/\x00", "\x00"]}),
    ]
    async with connect(server_url, token) as client:
        for tool, arguments in odd_calls:
            result = await client.call_tool(tool, arguments)
            text = " ".join(getattr(c, "text", "") for c in result.content)
            # The SDK says only "Error executing tool X" for an exception that is no ToolError.
            assert text.strip() != f"Error executing tool {tool}", arguments
            for internal in ("asyncpg", "invalid input", "Traceback", "0x00"):
                assert internal not in text, (tool, arguments, text)
