"""Newsdesk: a self-hosted, real-time newsroom for small teams."""
