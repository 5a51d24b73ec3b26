"""Accounts: people, workspaces, memberships and roles, sessions, API tokens.

A person signs in with an email and a password (argon2) and works in one
workspace at a time. Their role there (owner, admin, editor, viewer) maps to
permissions that guards check on every page and API endpoint.
"""
