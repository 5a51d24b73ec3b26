"""Every stream renders templates: the views' regions, and the layout's workspace bar each
stream sends when it opens (app.live.streams)."""

import pytest


@pytest.fixture(autouse=True)
def _templates(web_app):  # type: ignore[no-untyped-def]
    """The app sets up the templates the streams render."""
