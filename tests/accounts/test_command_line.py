"""The command line fails with one clear line, never a traceback, in the operator's language."""

from tests.cli import run_cli

NOBODY = "postgresql://newsdesk@127.0.0.1:9/newsdesk"  # nothing listens on port 9


def test_create_user_without_a_terminal_asks_nothing_and_says_why(settings):
    done = run_cli("create-user", "--email", "a@example.org", "--name", "A")
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "newsdesk: create-user needs --password when it is not run in a terminal"
    ]
    assert "Traceback" not in done.stderr
    assert "Password" not in done.stdout


def test_the_command_line_speaks_the_operators_german(settings):
    done = run_cli("create-user", "--email", "a@example.org", "--name", "A", lang="de_DE.UTF-8")
    assert done.stderr.strip().splitlines() == [
        "newsdesk: create-user braucht --password, wenn es nicht in einem Terminal läuft"
    ]
    checked = run_cli("check", lang="de_AT.UTF-8", database_url=NOBODY)
    assert checked.returncode == 2
    assert checked.stderr.startswith(
        "newsdesk: PostgreSQL unter postgresql://127.0.0.1:9/newsdesk (DATABASE_URL)"
        " ist nicht erreichbar: "
    )


def test_argparse_itself_speaks_german_too(settings):
    """argparse's own words ("usage:", "the following arguments are required") come from
    our catalogue, not just the help texts we wrote."""
    helped = run_cli("--help", lang="de_DE.UTF-8")
    assert helped.stdout.startswith("Aufruf: python -m app")
    assert "diese Hilfe anzeigen und beenden" in helped.stdout
    assert "den Webserver starten" in helped.stdout
    missing = run_cli("create-user", lang="de_DE.UTF-8")
    assert missing.returncode == 2
    assert "Fehler: diese Argumente fehlen: --email, --name" in missing.stderr


def test_an_unknown_language_is_english(settings):
    done = run_cli("check", lang="fi_FI.UTF-8", database_url=NOBODY)
    assert done.stderr.startswith("newsdesk: cannot reach PostgreSQL at ")


async def test_migrating_as_a_role_that_owns_nothing_says_what_to_set(clean_db: None) -> None:
    # The test database must exist (clean_db makes it): the refusal is PostgreSQL's own.
    done = run_cli("migrate")  # DATABASE_URL is the app's role; no DATABASE_OWNER_URL
    assert done.returncode == 2
    [line] = done.stderr.strip().splitlines()  # no traceback
    assert line == (
        "newsdesk: cannot migrate as newsdesk_app (DATABASE_URL): permission denied for schema"
        " public. Set DATABASE_OWNER_URL to the role that owns the tables."
    )
