"""Bulk URL import: jobs of URLs that workers read into the library, live on every device.

`parse_urls` reads a pasted list; `services` holds the use cases (create,
pause, resume, cancel, retry, delete; claim, lease, finish); `step` is the
worker's loop. Saving one link is a one-item job. See docs/decisions/imports.md.
"""

from app.imports.parsing import ParsedUrls, parse_urls

__all__ = ["ParsedUrls", "parse_urls"]
