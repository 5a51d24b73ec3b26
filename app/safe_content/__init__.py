"""Safe content: the rich-text AST every third-party post and article becomes.

Third-party HTML, plain text and Bluesky facets are turned into one closed,
typed tree (`Document`) at ingest; the tree is stored as JSON and rendered
only by `render_html`/`render_inline`/`render_text`, which write nothing but
their own escaped markup inside a Datastar `data-ignore` wrapper. This is
the only package that may import nh3 (docs/decisions/safe-content.md).
"""

from app.safe_content import native

native.load()  # first: the compiled hot modules, when built from these very sources

from app.safe_content import errors
from app.safe_content.ast import (
    MAX_DEPTH,
    MAX_NODES,
    MAX_TEXT,
    VERSION,
    Block,
    Code,
    CodeBlock,
    ContentWarning,
    Document,
    Em,
    Hashtag,
    Heading,
    Image,
    Inline,
    Label,
    LineBreak,
    Link,
    List,
    ListItem,
    Mention,
    Paragraph,
    Quote,
    Strong,
    Text,
    from_builtins,
    from_json,
    image_sources,
    to_json,
    validate,
)
from app.safe_content.errors import ContentTooLarge, InvalidContent
from app.safe_content.facets import from_facets
from app.safe_content.filters import register_filters
from app.safe_content.fit import with_content_warning
from app.safe_content.html_builder import from_html
from app.safe_content.plain import to_text
from app.safe_content.render import MediaUrl, render_html, render_inline, render_text
from app.safe_content.text_builder import from_text
from app.safe_content.textutil import one_line
from app.safe_content.urls import http_url, is_http_url

__all__ = [
    "MAX_DEPTH",
    "MAX_NODES",
    "MAX_TEXT",
    "VERSION",
    "Block",
    "Code",
    "CodeBlock",
    "ContentTooLarge",
    "ContentWarning",
    "Document",
    "Em",
    "Hashtag",
    "Heading",
    "Image",
    "Inline",
    "InvalidContent",
    "Label",
    "LineBreak",
    "Link",
    "List",
    "ListItem",
    "MediaUrl",
    "Mention",
    "Paragraph",
    "Quote",
    "Strong",
    "Text",
    "errors",
    "from_builtins",
    "from_facets",
    "from_html",
    "from_json",
    "from_text",
    "http_url",
    "image_sources",
    "is_http_url",
    "one_line",
    "register_filters",
    "render_html",
    "render_inline",
    "render_text",
    "to_json",
    "to_text",
    "validate",
    "with_content_warning",
]
