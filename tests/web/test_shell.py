"""The web shell: headers on every response, error pages, probes, OpenAPI."""

import re
from pathlib import Path

import pytest

from app.web.security import SECURITY_HEADERS
from tests.factories import sign_in

ROOT = Path(__file__).resolve().parents[2]

PATHS = [
    "/login",
    "/healthz",
    "/readyz",
    "/static/css/app.css",
    "/nowhere",
    "/api/v1/me",
    "/api/v1/schema/openapi.json",
]


@pytest.mark.parametrize("path", PATHS)
async def test_every_response_carries_the_security_headers(client, path):
    response = await client.get(path)
    for name, value in SECURITY_HEADERS.items():
        assert response.headers.get(name) == value, name


async def test_the_policy_is_strict_and_only_loosened_for_datastar(client):
    csp = (await client.get("/login")).headers["content-security-policy"]
    directives = dict(d.strip().split(" ", 1) for d in csp.split(";"))
    assert directives["default-src"] == "'self'"
    assert directives["script-src"] == "'self' 'unsafe-eval'"
    assert directives["object-src"] == "'none'"
    assert directives["base-uri"] == "'none'"
    assert directives["frame-ancestors"] == "'none'"
    assert directives["form-action"] == "'self'"
    assert "unsafe-inline" not in csp
    assert (await client.get("/login")).headers["x-content-type-options"] == "nosniff"
    assert (await client.get("/login")).headers["referrer-policy"] == "no-referrer"


async def test_unknown_pages_get_a_404_page_in_the_layout(client, people):
    person = await people.member("viewer")
    await sign_in(client, person.email)
    response = await client.get("/no/such/page")
    assert response.status_code == 404
    assert "There is nothing at this address." in response.text
    assert 'class="topbar"' in response.text


async def test_a_missing_object_inside_a_section_keeps_the_navigation(client, people):
    person = await people.member("viewer")
    await sign_in(client, person.email)
    response = await client.get("/invite/not-a-real-token")
    assert response.status_code == 404
    assert "This invitation cannot be used" in response.text
    assert 'class="nav"' in response.text


async def test_the_api_answers_errors_in_json(client):
    response = await client.get("/api/v1/nowhere")
    assert response.status_code == 404
    assert response.json()["status_code"] == 404


async def test_probes_report_database_and_redis(client):
    assert (await client.get("/healthz")).json() == {"status": "ok"}
    ready = (await client.get("/readyz")).json()
    assert ready == {"status": "ok", "database": "ok", "redis": "ok"}


async def test_openapi_documents_the_api_and_not_the_pages(client):
    schema = (await client.get("/api/v1/schema/openapi.json")).json()
    paths = set(schema["paths"])
    assert "/api/v1/me" in paths
    assert "/api/v1/events/{event_id}" in paths
    assert not any(p.startswith(("/login", "/settings", "/activity")) for p in paths)


def _sources(*patterns: str) -> list[Path]:
    files: list[Path] = []
    for pattern in patterns:
        files.extend(p for p in ROOT.glob(pattern) if ".venv" not in p.parts)
    return files


def test_no_template_or_module_marks_text_safe_outside_the_renderer():
    """Only app/safe_content may produce Markup; templates never use |safe."""
    offenders = []
    for path in _sources("templates/**/*.html", "app/**/*.py", "workers/**/*.py"):
        text = path.read_text()
        if "safe_content" in path.parts:
            continue
        if re.search(r"\|\s*safe\b", text) or re.search(r"\bMarkup\s*\(", text) or "|safe" in text:
            offenders.append(str(path.relative_to(ROOT)))
    assert offenders == []


def test_no_template_has_inline_script_style_or_event_handlers():
    offenders = []
    for path in _sources("templates/**/*.html"):
        text = path.read_text()
        for match in re.finditer(r"<script\b([^>]*)>", text):
            if "src=" not in match.group(1):
                offenders.append(f"{path.name}: inline <script>")
        if re.search(r"<style\b", text):
            offenders.append(f"{path.name}: <style>")
        if re.search(r"\sstyle\s*=", text):
            offenders.append(f"{path.name}: style attribute")
        if re.search(r"\son[a-z]+\s*=", text):
            offenders.append(f"{path.name}: on* handler")
    assert offenders == []


async def test_csp_reports_are_accepted_without_a_csrf_token(client):
    response = await client.post(
        "/csp-report",
        content=b'{"csp-report": {"violated-directive": "script-src"}}',
        headers={"content-type": "application/csp-report"},
    )
    assert response.status_code == 204


@pytest.mark.parametrize(
    "path", ["/wall", "/articles", "/articles/import", "/activity", "/settings"]
)
async def test_every_navigation_entry_leads_to_a_page(client, people, path):
    person = await people.member("viewer")
    await sign_in(client, person.email)
    response = await client.get(path)
    assert response.status_code == 200, path
    assert 'aria-current="page"' in response.text


async def test_an_unexpected_error_is_a_500_page_that_tells_nothing_internal(settings, services):
    import httpx
    from litestar import get

    from app.web.factory import create_app

    @get("/__boom", include_in_schema=False)
    async def boom() -> None:
        raise RuntimeError("secret internals: password=hunter2")

    app = create_app(settings, manage_connections=False)
    app.register(boom)
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver.local") as c:
        response = await c.get("/__boom")
    assert response.status_code == 500
    assert "Something went wrong" in response.text
    assert "hunter2" not in response.text
    assert "RuntimeError" not in response.text
    assert response.headers["content-security-policy"].startswith("default-src 'self'")
