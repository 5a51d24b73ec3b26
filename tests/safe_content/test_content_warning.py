"""Content warnings (Mastodon's spoiler_text): a collapsed <details>, escaped, within the caps."""

from app.safe_content import (
    MAX_DEPTH,
    ContentWarning,
    Document,
    Paragraph,
    Quote,
    Text,
    from_html,
    from_json,
    render_html,
    render_inline,
    to_json,
    to_text,
    validate,
    with_content_warning,
)


def test_the_warning_is_escaped_and_the_body_collapsed():
    doc = with_content_warning('<script>x</script> "spoilers"', from_html("<p>The end.</p>"))
    html = str(render_html(doc))
    assert html == (
        '<div class="rich" data-ignore><details><summary>&lt;script&gt;x&lt;/script&gt;'
        " &#34;spoilers&#34;</summary><p>The end.</p></details></div>"
    )
    assert str(render_inline(doc)) == (
        "<span data-ignore>&lt;script&gt;x&lt;/script&gt; &#34;spoilers&#34;</span>"
    )  # inline cannot collapse: only the warning shows
    assert to_text(doc) == '<script>x</script> "spoilers"\n\nThe end.'
    assert from_json(to_json(doc)) == doc


def test_a_blank_warning_changes_nothing():
    body = from_html("<p>Hi</p>")
    assert with_content_warning("  \n", body) is body


def test_wrapping_a_tree_at_the_depth_cap_still_fits_it():
    deep: Paragraph | Quote = Paragraph((Text("deep"),))
    for _ in range(MAX_DEPTH - 3):  # document, quotes, paragraph, text: exactly the cap
        deep = Quote((deep,))
    body = validate(Document(children=(deep,)))
    wrapped = with_content_warning("cw", body)
    validate(wrapped)
    assert isinstance(wrapped.children[0], ContentWarning)
