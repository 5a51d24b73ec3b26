"""Text a worker stored (an import's error, a failed analysis) reads in the reader's language.

Workers write it in English, the source language, for readers of every language; pages
find the catalogue message it was made from and show it translated, values kept.
"""

from datetime import UTC, datetime

from app.accounts import services as accounts
from app.core import db, i18n
from app.core.i18n import _
from app.imports import services
from tests.factories import signed_in_speaking
from tests.wall.helpers import keyword_column


async def _instagram_waits(workspace_id: int, column: int) -> None:
    """The column's sources rate-limited by Instagram's hashtag window (frees at 14:00 UTC
    on 5 December), with the English reason a worker stores."""
    reason = _("%(p)s allows %(n)s different %(u)s per %(d)s days; the next one frees up on %(t)s.") % {
        "p": "Instagram", "n": "30", "u": _("hashtags"), "d": 7,
        "t": i18n.stored_moment(datetime(2026, 12, 5, 14, 0, tzinfo=UTC)),
    }  # fmt: skip
    async with db.workspace_tx(workspace_id) as tx:
        await tx.execute(
            "UPDATE stream_sources SET state = 'rate_limited', last_error = $2"
            " WHERE id IN (SELECT source_id FROM stream_column_sources WHERE column_id = $1)",
            column, reason,
        )  # fmt: skip


def test_stored_english_is_translated_with_its_values():
    stored = _("This address serves %(type)s, not a web page or a PDF.") % {"type": "text/csv"}
    nested = _("arXiv refused the query: %(why)s") % {
        "why": _("arXiv did not answer with an Atom feed.")
    }
    with i18n.speaking("de"):
        assert i18n.translate_stored(stored) == (
            "Diese Adresse liefert text/csv, keine Webseite und kein PDF."
        )
        assert i18n.translate_stored(nested) == (
            "arXiv hat die Abfrage abgelehnt: arXiv hat nicht mit einem Atom-Feed geantwortet."
        )
        assert i18n.translate_stored("Keep it to 1,000 characters (this one has 1,234).") == (
            "Höchstens 1.000 Zeichen (dieser Text hat 1.234)."
        )
        assert i18n.translate_stored("every 5 minutes") == "alle 5 Minuten"
        # A site's own words are no catalogue message: shown as they are.
        assert i18n.translate_stored("Service Unavailable (nginx)") == "Service Unavailable (nginx)"
    assert i18n.translate_stored(stored) == stored  # English readers get it unchanged


async def test_an_import_error_reads_in_german(client, people):
    person = await signed_in_speaking(client, people, "de", "UTC")
    job_id = await services.create_job(
        person.workspace_id, ["https://news.example/a"], actor_user_id=person.user_id
    )
    reason = _("The site took too long to answer.")  # as the worker (English) stores it
    async with db.workspace_tx(person.workspace_id) as tx:
        await tx.execute(
            "UPDATE import_items SET state = 'error', error = $2 WHERE job_id = $1", job_id, reason
        )
    page = await client.get(f"/articles/import/{job_id}")
    assert page.status_code == 200
    assert "Die Website hat zu lange für die Antwort gebraucht." in page.text
    assert reason not in page.text


def test_a_stored_moment_reads_in_the_readers_language_and_time_zone():
    frees = datetime(2026, 12, 5, 14, 0, tzinfo=UTC)
    stored = _(
        "%(p)s allows %(n)s different %(u)s per %(d)s days; the next one frees up on %(t)s."
    ) % {"p": "Instagram", "n": "30", "u": _("hashtags"), "d": 7, "t": i18n.stored_moment(frees)}
    assert stored.endswith("frees up on 2026-12-05 14:00 UTC.")  # what the row keeps
    with i18n.speaking("de"):
        assert i18n.translate_stored(stored, "Europe/Berlin") == (
            "Instagram erlaubt 30 verschiedene Hashtags pro 7 Tage;"
            " der nächste Platz wird am 5. Dez., 15:00 frei."
        )
    english = i18n.translate_stored(stored, "America/New_York")
    assert english.startswith("Instagram allows 30 different hashtags per 7 days")
    assert english.endswith(
        f"frees up on {i18n.format_datetime(frees, 'America/New_York', 'day_time')}."
    )
    assert "Dec 5" in english
    assert "9:00" in english  # 14:00 UTC is 9:00 in New York
    assert "UTC" not in english
    # Something that only looks like a moment is left as it was written.
    assert i18n.translate_stored("built 2026-13-45 99:99 UTC") == "built 2026-13-45 99:99 UTC"


async def test_api_resources_give_stored_reasons_in_the_callers_language(client, people):
    person = await signed_in_speaking(client, people, "en", "Europe/Berlin")
    token = await accounts.issue_api_token(person.workspace_id, person.user_id, "cli")
    column = await keyword_column(person.workspace_id, "Floods")
    await _instagram_waits(person.workspace_id, column)
    job_id = await services.create_job(
        person.workspace_id, ["https://news.example/a"], actor_user_id=person.user_id
    )
    async with db.workspace_tx(person.workspace_id) as tx:
        await tx.execute(
            "UPDATE import_items SET state = 'error', error = $2 WHERE job_id = $1",
            job_id, _("The site took too long to answer."),
        )  # fmt: skip
    german = {"Authorization": f"Bearer {token}", "Accept-Language": "de"}

    columns = (await client.get("/api/v1/feeds/columns", headers=german)).json()["columns"]
    [source] = next(c for c in columns if c["id"] == column)["sources"]
    assert source["last_error"] == (
        "Instagram erlaubt 30 verschiedene Hashtags pro 7 Tage;"
        " der nächste Platz wird am 5. Dez., 15:00 frei."  # Berlin time, not UTC
    )
    items = await client.get(f"/api/v1/imports/{job_id}/items", headers=german)
    assert (
        items.json()["items"][0]["error"] == "Die Website hat zu lange für die Antwort gebraucht."
    )

    english = await client.get(
        "/api/v1/feeds/columns", headers={"Authorization": f"Bearer {token}"}
    )
    [source] = next(c for c in english.json()["columns"] if c["id"] == column)["sources"]
    assert "frees up on Dec 5" in source["last_error"]
    assert "UTC" not in source["last_error"]


async def test_a_reason_made_while_a_german_saves_a_column_is_stored_in_english(client, people):
    person = await people.member("owner")
    token = await accounts.issue_api_token(person.workspace_id, person.user_id, "cli")
    bearer = {"Authorization": f"Bearer {token}"}
    made = await client.post(
        "/api/v1/feeds/columns",
        headers={**bearer, "Accept-Language": "de"},
        json={"type": "keyword", "title": "Floods",
              "spec": {"query": "#floods today", "platforms": ["instagram", "mastodon"],
                       "instances": ["social.example"]}},
    )  # fmt: skip
    assert made.status_code == 201, made.text
    [instagram] = made.json()["unsupported_platforms"]
    assert instagram["reason"] == "Instagram-Spalten folgen nur einem einzelnen #Hashtag."
    stored = await db.fetchval("SELECT spec FROM stream_columns WHERE id = $1", made.json()["id"])
    assert "Instagram columns take a single #hashtag only." in stored  # English in the row
    english = await client.get("/api/v1/feeds/columns", headers=bearer)
    [column] = [c for c in english.json()["columns"] if c["id"] == made.json()["id"]]
    [instagram] = column["unsupported_platforms"]
    assert instagram["reason"] == "Instagram columns take a single #hashtag only."


async def test_the_wall_shows_a_sources_stored_moment_in_the_readers_zone(client, people):
    person = await signed_in_speaking(client, people, "de", "Asia/Tokyo")
    column = await keyword_column(person.workspace_id, "Floods")
    await _instagram_waits(person.workspace_id, column)
    wall = await client.get("/wall")
    # 14:00 UTC is 23:00 in Tokyo, on the same day
    assert "der nächste Platz wird am 5. Dez., 23:00 frei." in wall.text
    assert "UTC" not in wall.text.split("source-error", 1)[1].split("</span>", 1)[0]


async def test_a_budget_pause_says_until_when_in_the_readers_language_and_zone(client, people):
    person = await signed_in_speaking(client, people, "de", "America/Los_Angeles")
    column = await keyword_column(person.workspace_id, "Floods")
    async with db.workspace_tx(person.workspace_id) as tx:
        await tx.execute(
            "UPDATE stream_sources SET state = 'budget_paused',"
            " next_poll_at = timestamptz '2026-12-02 08:00+00'"
            " WHERE id IN (SELECT source_id FROM stream_column_sources WHERE column_id = $1)",
            column,
        )  # fmt: skip
    wall = (await client.get("/wall")).text
    # Google's quota day ends at midnight Pacific time: 08:00 UTC, 00:00 in Los Angeles
    assert "Kontingent bis 2. Dez., 00:00 aufgebraucht" in wall
    assert "08:00 UTC" not in wall
