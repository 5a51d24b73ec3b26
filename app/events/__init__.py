"""The domain event log: what happened in a workspace, shown live on Activity."""
