"""DemoServer: routing, wire format, keep-alive and hits, reached the way Newsdesk reaches it."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from app.demo.http import DemoRequest, DemoResponse, DemoServer, DemoThread
from tests.egress.conftest import MakeEgress


def _server() -> DemoServer:
    server = DemoServer()
    server.add("GET", r"/hello", lambda r: DemoResponse(body=f"hi {r.arg('name', 'you')}"))
    server.add(
        "GET", r"/items/(?P<item>\d+)", lambda r: DemoResponse(json={"item": int(r.params["item"])})
    )

    async def echo(request: DemoRequest) -> DemoResponse:
        return DemoResponse(201, {"X-Seen": request.origin}, json=request.json())

    server.add("POST", r"/echo", echo)
    server.add("GET", r"/boom", lambda r: 1 / 0)  # type: ignore[arg-type,return-value]
    return server


async def test_routes_answer_with_their_handlers() -> None:
    async with _server() as server, httpx.AsyncClient(base_url=server.base) as client:
        hello = await client.get("/hello", params={"name": "Lena"})
        item = await client.get("/items/42")
        echoed = await client.post("/echo", json={"q": "klima"})
    assert (hello.status_code, hello.text) == (200, "hi Lena")
    assert hello.headers["content-type"] == "text/plain; charset=utf-8"
    assert item.json() == {"item": 42}
    assert item.headers["content-type"] == "application/json; charset=utf-8"
    assert echoed.status_code == 201
    assert echoed.json() == {"q": "klima"}
    assert echoed.headers["x-seen"] == f"http://127.0.0.1:{server.port}"
    assert [hit.path for hit in server.hits] == ["/hello", "/items/42", "/echo"]
    assert server.hits_of("/hello")[0].query == {"name": ["Lena"]}


async def test_unknown_paths_methods_and_failures_have_their_statuses() -> None:
    async with _server() as server, httpx.AsyncClient(base_url=server.base) as client:
        missing = await client.get("/nope")
        wrong = await client.delete("/hello")
        head = await client.head("/hello")
        failed = await client.get("/boom")
        still = await client.get("/hello")  # the connection and server survive a failure
    assert missing.status_code == 404
    assert (wrong.status_code, wrong.headers["allow"]) == (405, "GET")
    assert (head.status_code, head.content, head.headers["content-length"]) == (200, b"", "6")
    assert failed.status_code == 500
    assert still.text == "hi you"


async def test_keep_alive_serves_many_requests_on_one_connection() -> None:
    async with _server() as server:
        connections = 0
        original = server._serve

        async def counting(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            nonlocal connections
            connections += 1
            await original(reader, writer)

        server._serve = counting  # type: ignore[method-assign]
        await server.stop()
        await server.start()
        async with httpx.AsyncClient(base_url=server.base) as client:
            answers = [(await client.get("/hello")).text for _ in range(5)]
    assert answers == ["hi you"] * 5
    assert connections == 1


async def test_behind_egress_divert_it_sees_the_original_origin(make_egress: MakeEgress) -> None:
    async with _server() as server:
        client = make_egress(egress_divert=[f"https://bsky.social={server.base}"])
        fetched = await client.fetch("https://bsky.social/echo", method="POST", json=[1])
    assert fetched.status == 201
    assert fetched.headers["x-seen"] == "https://bsky.social"
    assert server.hits[0].headers["host"] == "bsky.social"


def test_a_demo_thread_serves_on_a_port_chosen_up_front() -> None:
    thread = DemoThread()
    try:
        server = thread.start(_server())
        answer = httpx.get(server.url("/items/7"), timeout=5)
    finally:
        thread.stop()
    assert answer.json() == {"item": 7}
    with pytest.raises(httpx.ConnectError):
        httpx.get(server.url("/items/7"), timeout=1)
