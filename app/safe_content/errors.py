"""Errors raised when stored rich text cannot be trusted.

Both are ValueErrors so callers that only care about "bad input" can catch
one type. Builders never raise these for merely big input: they truncate.
"""


class InvalidContent(ValueError):
    """Rich text that does not match the closed node set or its rules."""


class ContentTooLarge(InvalidContent):
    """Rich text over one of the size caps (depth, node count, text length)."""
