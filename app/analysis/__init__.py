"""Analysis of saved articles: a local extractive analyser, or an OpenAI-compatible endpoint."""
