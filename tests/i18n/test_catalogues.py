"""The catalogues keep up with the code: every UI text extracted today has its German,
and no translation changes a placeholder (a wrong one is a crash or a lie at run time).

The extraction runs here, like `make messages`, so the test compares the code as it is
with the catalogue in git. Added UI text? `make messages`, then translate it in
app/locale/de/LC_MESSAGES/messages.po.
"""

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest
from babel.messages.catalog import Catalog, Message
from babel.messages.pofile import read_po

ROOT = Path(__file__).resolve().parents[2]
LOCALE = ROOT / "app" / "locale"
# The extraction keywords are `make messages`' own: one list, in the Makefile.
KEYWORDS = re.findall(r"-k (\S+)", (ROOT / "Makefile").read_text())
PLACEHOLDER = re.compile(r"%\([^)]+\)[a-z]|%[sdr]|\{[A-Za-z_][A-Za-z0-9_]*\}")


@pytest.fixture(scope="module")
def extracted(tmp_path_factory) -> Catalog:
    pot = tmp_path_factory.mktemp("messages") / "messages.pot"
    subprocess.run(
        [
            sys.executable, "-m", "babel.messages.frontend", "-q", "extract",
            "-F", "babel.cfg", *[arg for k in KEYWORDS for arg in ("-k", k)],
            "--no-location", "-o", str(pot), ".",
        ],
        cwd=ROOT,
        check=True,
    )  # fmt: skip
    with pot.open("rb") as fh:
        return read_po(fh)


def catalogue(language: str) -> Catalog:
    with (LOCALE / language / "LC_MESSAGES" / "messages.po").open("rb") as fh:
        return read_po(fh, locale=language)


def forms(value: object) -> list[str]:
    return list(value) if isinstance(value, (list, tuple)) else [str(value or "")]


def placeholders(text: str) -> list[str]:
    return sorted(PLACEHOLDER.findall(text))


def test_every_ui_text_has_its_german(extracted):
    german = catalogue("de")
    missing = []
    for message in extracted:
        if not message.id:
            continue
        translated: Message | None = german.get(message.id)
        if translated is None or not all(forms(translated.string)) or translated.fuzzy:
            missing.append(message.id)
    assert missing == [], (
        "UI text without German: run `make messages`, then translate these in "
        f"app/locale/de/LC_MESSAGES/messages.po: {missing}"
    )


@pytest.mark.parametrize("language", ["de", "fr", "it", "es"])
def test_translations_keep_the_placeholders(language):
    wrong = []
    for message in catalogue(language):
        if not message.id:
            continue
        sources = forms(message.id)
        for index, text in enumerate(forms(message.string)):
            source = sources[min(index, len(sources) - 1)]
            if text and placeholders(text) != placeholders(source):
                wrong.append((source, text))
    assert wrong == []


@pytest.mark.parametrize("language", ["de", "fr", "it", "es"])
def test_translations_end_in_a_colon_only_where_the_source_does(language):
    """Pages write what follows a text themselves: an Activity row is `verb: subject`, so a
    verb translated with its own colon reads "hat einen Import gestartet:: 1 URL"."""
    wrong = []
    for message in catalogue(language):
        if not message.id:
            continue
        ends = forms(message.id)[0].rstrip().endswith(":")
        wrong += [t for t in forms(message.string) if t and t.rstrip().endswith(":") != ends]
    assert wrong == []


@pytest.mark.parametrize(("language", "plurals"), [("de", 2), ("fr", 3), ("it", 3), ("es", 3)])
def test_catalogues_carry_their_plural_rules(language, plurals):
    assert catalogue(language).num_plurals == plurals


def test_the_check_would_see_a_changed_placeholder():
    assert placeholders("%(n)d Artikel von {name}") != placeholders("%(num)d articles by {name}")


def test_numbers_reach_ui_text_formatted(extracted):
    """A count goes into UI text as `%(num)s`, formatted first (format_number, `|number`,
    ngettext's `num`), never as `%d`, which prints 1234 where German readers expect 1.234."""
    raw = [
        m.id for m in extracted if m.id and any(re.search(r"%(\(\w+\))?d", f) for f in forms(m.id))
    ]
    assert raw == []


@pytest.mark.parametrize("language", ["fr", "it", "es"])
def test_prepared_catalogues_are_translated(language):
    """fr, it and es were prepared empty and fell behind: 884 of 887 messages had no
    translation. Each is translated now, every plural form, none fuzzy."""
    missing = [
        message.id
        for message in catalogue(language)
        if message.id and (not all(forms(message.string)) or message.fuzzy)
    ]
    assert missing == [], f"translate these in app/locale/{language}/LC_MESSAGES/messages.po"


@pytest.mark.parametrize("language", ["fr", "it", "es"])
def test_prepared_catalogues_list_every_ui_text(extracted, language):
    """fr, it and es stay ready: every message is there, so a translator finds all of
    them; `make messages` keeps them in step."""
    listed = {m.id if isinstance(m.id, str) else m.id[0] for m in catalogue(language) if m.id}
    needed = {m.id if isinstance(m.id, str) else m.id[0] for m in extracted if m.id}
    assert sorted(needed - listed) == [], "run `make messages`: it adds them to every catalogue"


def _wrappers_of(function: str) -> list[str]:
    """Functions in app/ that hand their own arguments to `function`: the extractor reads
    literals only, so each must be an extraction keyword (the Makefile's `-k`) itself."""
    found = []
    for path in (ROOT / "app").rglob("*.py"):
        if path.name == "i18n.py" and path.parent.name == "core":
            continue  # the functions themselves
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not isinstance(node, ast.FunctionDef):
                continue
            params = {a.arg for a in node.args.args}
            for call in ast.walk(node):
                if (
                    isinstance(call, ast.Call)
                    and getattr(call.func, "id", getattr(call.func, "attr", "")) == function
                    and any(isinstance(a, ast.Name) and a.id in params for a in call.args[:2])
                ):
                    found.append(node.name)
    return found


def test_plural_wrappers_are_extraction_keywords():
    """A helper like `_count(singular, plural, n)` passes its texts on to ngettext: unless
    extraction knows it, its texts never reach a catalogue and stay English ("1 error"
    on a German page)."""
    names = {k.split(":")[0] for k in KEYWORDS}
    assert [w for w in _wrappers_of("ngettext") if w not in names] == []
