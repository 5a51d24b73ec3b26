"""Infrastructure every domain shares: settings, the database, Redis and jobs."""
