"""No template shows a person literal UI text outside `_()`.

A heuristic: strip the Jinja tags, then every text node and every title, aria-label,
placeholder and alt attribute must be free of words. What remains legitimately literal
(brand names, technical tokens) is allowed by name below.
"""

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

TEMPLATES = Path(__file__).resolve().parents[2] / "templates"
JINJA = re.compile(r"{{.*?}}|{%.*?%}|{#.*?#}", re.DOTALL)
# Blocks that hold markup values (a class name), not text.
VALUE_BLOCKS = re.compile(r"{%-?\s*block body_class\s*-?%}.*?{%-?\s*endblock\s*-?%}", re.DOTALL)
# Examples in placeholders: addresses, handles and host names (a.b, @a@b), channel ids.
EXAMPLE_URL = re.compile(r"https?://\S+|@?[\w-]+(?:[.@][\w-]+)+|\bUC\w{10,}")
WORD = re.compile(r"[A-Za-zÄÖÜäöüß]{2,}")
READ_ATTRIBUTES = {
    "title", "aria-label", "aria-description", "aria-roledescription", "aria-valuetext",
    "placeholder", "alt", "label",
}  # fmt: skip
# A button's text is its value; so is a meta description's content.
READ_WHEN = {
    ("input", "value"): {"submit", "button", "reset"},
    ("meta", "content"): {"description"},
}
# Names and tokens that read the same in every language.
ALLOWED = {"Newsdesk", "arXiv", "RSS", "Atom", "PDF", "API", "URL", "URLs", "JSON", "Bearer"}
ALLOWED |= {"Enter", "Esc", "Tab"}  # key names, as printed on keyboards


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("script", "style"):
            self._skip += 1
        self.found += [value for name, value in attrs if name in READ_ATTRIBUTES and value]
        given = dict(attrs)
        for (element, name), kinds in READ_WHEN.items():
            if (
                tag == element
                and given.get(name)
                and (given.get("type") or given.get("name")) in kinds
            ):
                self.found.append(given[name] or "")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style"):
            self._skip = max(0, self._skip - 1)

    def handle_data(self, data: str) -> None:
        if not self._skip:
            self.found.append(data)


def literal_words(source: str) -> list[str]:
    parser = _Text()
    parser.feed(JINJA.sub(" ", VALUE_BLOCKS.sub(" ", source)))
    texts = [EXAMPLE_URL.sub(" ", text) for text in parser.found]
    return [w for text in texts for w in WORD.findall(text) if w not in ALLOWED]


@pytest.mark.parametrize(
    "template", sorted(TEMPLATES.rglob("*.html")), ids=lambda p: str(p.relative_to(TEMPLATES))
)
def test_templates_have_no_untranslated_text(template):
    assert literal_words(template.read_text()) == []


def test_the_check_sees_every_text_people_read():
    cases = {
        "<p>Saved</p>": ["Saved"],
        '<img alt="Lead image" src="x">': ["Lead", "image"],
        '<input placeholder="Search posts">': ["Search", "posts"],
        '<nav aria-label="Main menu"></nav>': ["Main", "menu"],
        '<input type="submit" value="Save it">': ["Save", "it"],
        '<meta name="description" content="A newsroom">': ["newsroom"],
        '<optgroup label="Platforms"></optgroup>': ["Platforms"],
        '<a title="Open it" href="/x">{{ _("Open") }}</a>': ["Open", "it"],
    }
    for template, words in cases.items():
        assert literal_words(template) == words, template
    # Not read: values sent with a form, class names, translated text, brand names.
    assert literal_words('<input type="hidden" name="next" value="library">') == []
    assert literal_words('<div class="column wide" title="{{ _(\'Wide\') }}">Newsdesk</div>') == []


def test_the_check_sees_text_and_attributes():
    assert literal_words('<p>{{ _("Fine") }}</p><button title="Close">{{ x }}</button>') == [
        "Close"
    ]
    assert literal_words("<h1>Library</h1><p>{% if a %}{{ _('ok') }}{% endif %}</p>") == ["Library"]
