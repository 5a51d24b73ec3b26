"""The vault contexts of the wall's secrets: a sealed value opens only in its own row."""


def connection(workspace_id: int, connection_id: int) -> str:
    return f"ws:{workspace_id}:connection:{connection_id}"


def credential(workspace_id: int, provider: str) -> str:
    return f"ws:{workspace_id}:credential:{provider}"
