"""Live pages: per-workspace notices over Redis pub/sub and Datastar SSE streams.

A notice only says which topic of a workspace changed. A page's stream first
patches the current state of its regions, then re-renders the regions whose
topics changed. Pages are state, not deltas: a reconnect is always correct.
"""
