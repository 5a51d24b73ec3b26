"""The article library: one processing path, extraction, the reader and search."""
