"""The API explains itself: how to authenticate and what each list takes."""

from app.accounts import services
from tests.factories import sign_in


async def _schema(client):  # type: ignore[no-untyped-def]
    return (await client.get("/api/v1/schema/openapi.json")).json()


async def test_openapi_declares_the_bearer_scheme_for_every_api_operation(client):
    schema = await _schema(client)
    schemes = schema["components"]["securitySchemes"]
    (name,) = schemes
    assert schemes[name]["type"] == "http"
    assert schemes[name]["scheme"] == "bearer"
    for path, operations in schema["paths"].items():
        for operation in operations.values():
            assert {name: []} in operation.get("security", schema.get("security", [])), path


async def test_openapi_lists_the_query_parameters_of_the_lists(client):
    schema = await _schema(client)

    def names(path: str) -> set[str]:
        return {p["name"] for p in schema["paths"][path]["get"].get("parameters", [])}

    assert {"q", "topic", "source", "state", "deleted", "cursor", "limit"} <= names(
        "/api/v1/articles"
    )
    assert {"kind", "cursor", "limit"} <= names("/api/v1/events")


async def test_the_token_help_shows_the_placeholder_as_text(client, people):
    person = await people.member("editor")
    await sign_in(client, person.email)
    html = (await client.get("/settings/tokens")).text
    assert "Authorization: Bearer &lt;token&gt;" in html
    assert "<token>" not in html


async def test_events_and_articles_answer_in_the_same_envelope(client, people):
    person = await people.member("editor")
    token = await services.issue_api_token(person.workspace_id, person.user_id, "cli")
    headers = {"authorization": f"Bearer {token}"}
    articles = (await client.get("/api/v1/articles", headers=headers)).json()
    events = (await client.get("/api/v1/events", headers=headers)).json()
    assert isinstance(events, dict)
    assert set(events) == set(articles)
    assert [e["kind"] for e in events["items"]][-1] == "workspace_created"
