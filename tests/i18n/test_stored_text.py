"""Text a worker stored (an import's error, a failed analysis) reads in the reader's language.

Workers write it in English, the source language, for readers of every language; pages
find the catalogue message it was made from and show it translated, values kept.
"""

from app.core import db, i18n
from app.core.i18n import _
from app.imports import services
from tests.factories import post_form, sign_in


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
    person = await people.member("editor")
    await sign_in(client, person.email)
    await post_form(
        client, "/settings/profile", {"display_name": "Ada", "locale": "de", "time_zone": "UTC"}
    )
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
