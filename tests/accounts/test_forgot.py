"""Forgot password?: a real SMTP server on loopback receives the mail; the test follows its link."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from email.header import decode_header, make_header

import pytest

from app.core import config, db
from app.core.config import Settings
from tests.factories import post_form, sign_in
from tests.fakes.mail import SMTP_PASSWORD, Mailbox, self_signed_certificate
from tests.fixtures import make_test_settings
from tests.workers.processes import free_port

NEW_PASSWORD = "a fresh password here"
SENDER = "Newsdesk <newsdesk@example.org>"


@pytest.fixture
def mailbox(settings: Settings) -> Iterator[Mailbox]:
    """Mail set up: SMTP_* point at a real SMTP server on loopback for this test."""
    box = Mailbox()
    controller = box.serve()
    config.activate(
        make_test_settings(
            smtp_host="127.0.0.1",
            smtp_port=box.port,
            smtp_tls="none",
            smtp_user="newsdesk",
            smtp_password=SMTP_PASSWORD,
            smtp_from=SENDER,
        )
    )
    yield box
    config.activate(settings)
    controller.stop()


async def _ask(client, address: str):  # type: ignore[no-untyped-def]
    page = await client.get("/forgot")
    assert page.status_code == 200
    assert 'name="email"' in page.text
    return await post_form(client, "/forgot", {"email": address})


async def test_a_mailed_link_sets_a_new_password(client, new_client, people, mailbox):
    person = await people.member("editor")
    answer = await _ask(client, person.email)
    assert answer.status_code == 200
    assert "we have sent it a link" in answer.text

    assert len(mailbox.mails) == 1
    mail = mailbox.mails[0]
    assert mail["To"] == person.email
    assert mail["From"] == SENDER
    assert mail["Subject"] == "Reset your Newsdesk password"
    assert mailbox.logins == [("newsdesk", SMTP_PASSWORD)]

    browser = new_client()
    path = mailbox.link()
    page = await browser.get(path)
    assert page.status_code == 200
    assert person.email in page.text
    done = await post_form(browser, path, {"password": NEW_PASSWORD})
    assert done.status_code == 303
    assert (await sign_in(browser, person.email, NEW_PASSWORD)).status_code == 303
    assert (await browser.get(path)).status_code == 404  # used


async def test_the_answer_is_the_same_whether_the_account_exists(client, people, mailbox):
    person = await people.member("editor")
    known = await _ask(client, person.email)
    unknown = await _ask(client, "nobody@example.org")
    assert known.status_code == unknown.status_code == 200
    assert known.text.replace(person.email, "X") == unknown.text.replace("nobody@example.org", "X")
    assert len(mailbox.mails) == 1  # only the real account got mail
    assert await db.fetchval("SELECT count(*) FROM password_resets") == 1


async def test_a_mailed_link_expires_within_an_hour(client, people, mailbox):
    person = await people.member("viewer")
    await _ask(client, person.email)
    lifetime = await db.fetchval("SELECT expires_at - created_at FROM password_resets")
    assert lifetime.total_seconds() == 3600


async def test_an_account_gets_at_most_three_mails_an_hour(client, people, mailbox):
    person = await people.member("viewer")
    for _ in range(5):
        assert (await _ask(client, person.email)).status_code == 200
    assert len(mailbox.mails) == 3


async def test_an_empty_address_is_asked_for_again(client, mailbox):
    response = await post_form(client, "/forgot", {"email": "  "})
    assert response.status_code == 400
    assert "Enter the email you sign in with." in response.text
    assert mailbox.mails == []


async def test_a_broken_mail_server_is_logged_and_the_answer_stays_the_same(
    client, people, settings, caplog
):
    person = await people.member("editor")
    config.activate(
        make_test_settings(
            smtp_host="127.0.0.1", smtp_port=free_port(), smtp_tls="none", smtp_from=SENDER
        )
    )
    try:
        with caplog.at_level(logging.ERROR, logger="app.accounts.recovery"):
            answer = await _ask(client, person.email)
    finally:
        config.activate(settings)
    assert answer.status_code == 200
    assert "we have sent it a link" in answer.text
    lines = [r.getMessage() for r in caplog.records if r.name == "app.accounts.recovery"]
    assert len(lines) == 1
    assert "reset mail for user" in lines[0]
    assert "not sent" in lines[0]


async def test_without_mail_the_page_says_to_ask_an_admin(client, people):
    person = await people.member("editor")
    page = await client.get("/forgot")
    assert page.status_code == 200
    assert "Ask an admin or owner of your workspace" in page.text
    assert 'name="email"' not in page.text
    posted = await post_form(client, "/forgot", {"email": person.email})
    assert posted.status_code == 200
    assert "Ask an admin or owner of your workspace" in posted.text
    assert await db.fetchval("SELECT count(*) FROM password_resets") == 0


def test_mail_needs_a_from_address():
    with pytest.raises(ValueError, match="SMTP_FROM must be an address"):
        make_test_settings(smtp_host="smtp.example.org")
    assert make_test_settings(smtp_host="smtp.example.org", smtp_from=SENDER).mail_configured
    assert not make_test_settings().mail_configured


@pytest.mark.parametrize("mode", ["starttls", "tls"])
async def test_mail_over_tls_is_sent_to_a_trusted_server_and_refused_to_an_unknown_one(
    client, people, settings, tmp_path, monkeypatch, caplog, mode
):
    person = await people.member("editor")
    cert_file, server_tls = self_signed_certificate(tmp_path)
    box = Mailbox()
    controller = box.serve(tls=server_tls, implicit=mode == "tls")
    config.activate(
        make_test_settings(
            smtp_host="127.0.0.1",
            smtp_port=box.port,
            smtp_tls=mode,
            smtp_user="newsdesk",
            smtp_password=SMTP_PASSWORD,
            smtp_from=SENDER,
        )
    )
    try:
        with caplog.at_level(logging.ERROR, logger="app.accounts.recovery"):
            await _ask(client, person.email)  # the certificate is nobody we trust
            assert box.mails == []
            assert "CERTIFICATE_VERIFY_FAILED" in caplog.text
            # OpenSSL reads SSL_CERT_FILE whenever a context loads the default trust.
            monkeypatch.setenv("SSL_CERT_FILE", str(cert_file))
            await _ask(client, person.email)
    finally:
        config.activate(settings)
        controller.stop()
    assert len(box.mails) == 1
    assert box.logins == [("newsdesk", SMTP_PASSWORD)]  # only ever over TLS
    assert (await sign_in(client, person.email)).status_code == 303  # nothing changed yet


async def test_one_address_cannot_mail_every_account(client, people, settings, mailbox):
    everyone = [await people.member("viewer") for _ in range(settings.login_attempts_per_15min)]
    for person in everyone:
        assert (await _ask(client, person.email)).status_code == 200
    extra = await people.member("viewer")
    refused = await _ask(client, extra.email)
    assert refused.status_code == 429
    assert "Too many requests from your network. Try again in 15 minutes." in refused.text
    assert f'value="{extra.email}"' in refused.text  # what was typed stays
    assert len(mailbox.mails) == len(everyone)


async def test_the_mail_is_in_its_recipients_language(client, people, mailbox):
    from app.accounts import services

    person = await people.member("editor")
    await services.update_profile(person.user_id, "Renate", "de", "Europe/Berlin")
    await client.get("/forgot", headers={"Accept-Language": "en"})  # asked from an English browser
    await post_form(client, "/forgot", {"email": person.email})

    mail = mailbox.mails[0]
    subject = str(make_header(decode_header(mail["Subject"])))
    assert subject == "Ihr Newsdesk-Passwort zurücksetzen"
    body = mail.get_payload(decode=True).decode()
    assert "öffnen Sie diesen Link innerhalb von 60 Minuten" in body
    assert "Someone asked" not in body
