"""Topics: named subjects whose feeds and arXiv queries fill the library on a schedule."""
