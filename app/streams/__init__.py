"""The wall: columns of posts from many platforms, polled in the background.

A column (platform feed, keyword search, account list, saved search) is a
spec; saving it resolves the spec into shared sources (one per provider,
kind, connection, adapted query and account, unique per workspace), which
the scheduler polls through the providers (`providers/`) and egress. Items
are stored once per workspace (deduplicated), their content already a
safe_content AST, and linked to every column of the source that found them.
See docs/decisions/streams.md.
"""
