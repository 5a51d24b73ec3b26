"""to_text: plain text for search and previews."""

from __future__ import annotations

from app.safe_content import (
    Code,
    CodeBlock,
    Document,
    Em,
    Hashtag,
    Heading,
    Image,
    LineBreak,
    Link,
    List,
    ListItem,
    Mention,
    Paragraph,
    Quote,
    Strong,
    Text,
    from_html,
    from_text,
    to_text,
)


def test_blocks_become_blank_lines_and_breaks_newlines() -> None:
    doc = Document(
        (
            Heading(2, (Text("Title"),)),
            Paragraph(
                (
                    Text("a "),
                    Strong((Em((Text("b"),)),)),
                    Text(" "),
                    Code("c()"),
                    LineBreak(),
                    Link("https://x.example/", (Text("link"),)),
                    Text(" "),
                    Image("https://x.example/i.png", "chart"),
                    Text(" "),
                    Mention("@alice"),
                    Text(" "),
                    Hashtag("cats"),
                )
            ),
            CodeBlock("x = 1\ny = 2"),
            Quote((Paragraph((Text("quoted"),)), Paragraph((Text("twice"),)))),
            List((ListItem((Paragraph((Text("one"),)),)), ListItem((Paragraph((Text("two"),)),)))),
        )
    )
    assert to_text(doc) == (
        "Title\n\na b c()\nlink  @alice #cats\n\nx = 1\ny = 2\n\nquoted\n\ntwice\n\none\ntwo"
    )


def test_no_markup_survives() -> None:
    doc = from_html("<p>x <b>y</b> <a href='https://a.example'>z</a><script>s</script></p>")
    assert to_text(doc) == "x y z"


def test_round_trips_plain_text() -> None:
    text = "para one\nline two\n\npara two"
    assert to_text(from_text(text)) == text


def test_empty() -> None:
    assert to_text(Document()) == ""
