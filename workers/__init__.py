"""arq workers: the settings and thin task functions that call domain services."""
