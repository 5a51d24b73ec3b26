"""German compounds are found by their first word: "Klima" finds "Klimawandel", "Klimadaten".

German (and Dutch, Danish, Norwegian, Swedish) write compounds closed, and Snowball stems a
compound as one word, so a search for "Klima" missed every article about "Klimadaten". In
those languages a query word of four letters or more (after stemming) now also finds the
words it begins: the query is `websearch_to_tsquery`'s with such words made prefixes
(`'klima':*`). Words in a "quoted phrase" stay exact (a phrase is what
was typed), and so do shorter words ("Ei" would begin thousands of words). Every other
language reads the query as before: "port" finds no "portfolio".

`newsdesk_search_parses(q)` gives, once per search, each configuration's parse and its
exact parse (the library ranks exact matches first); `newsdesk_search_any` ORs the parses
(the GIN index reads a prefix as a range of its keys). No index or stored vector
changes: the prefix is the query's.
"""

from app.core.db import sql_migration

ID = "2026-12-02T02:00:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "search: a compound is found by its first word in compounding languages"

# Configurations (m0005) of languages that write compounds as one word.
COMPOUNDING = ("danish", "dutch", "german", "norwegian", "swedish")
# Shorter stems stay exact: a prefix of two or three letters begins too many words.
SHORTEST_PREFIX = 4

_CONFIGS = ",".join(f"newsdesk_{name}" for name in COMPOUNDING)
# A lexeme in the query's text form ('klima', '' doubled inside) of SHORTEST_PREFIX or more
# characters, not next to a phrase operator (<-> or <N>); spaces never occur in a lexeme, so
# a match cannot start at a closing quote.
_LEXEME = f"(?<!> )('(?:[^' ]|''){{{SHORTEST_PREFIX},}}')(?! <)"
_LEXEME_SQL = _LEXEME.replace("'", "''")

_COMPOUNDING_SQL = ", ".join(f"'newsdesk_{name}'" for name in COMPOUNDING)

SQL = f"""
-- Once per search: every configuration, the query as it reads it (compounds' prefixes
-- included) and exactly. A row's own parse is found by array_position(configs, its
-- configuration). One set-based query: a function called per configuration cost ~5x.
CREATE FUNCTION newsdesk_search_parses(q text, OUT configs regconfig[], OUT queries tsquery[],
                                       OUT exact tsquery[])
LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT array_agg(c.oid::regconfig ORDER BY c.oid),
    array_agg(CASE
        WHEN c.cfgname IN ({_COMPOUNDING_SQL}) AND numnode(parsed) > 0
          THEN regexp_replace(parsed::text, '{_LEXEME_SQL}', '\\1:*', 'g')::tsquery
        ELSE parsed
      END ORDER BY c.oid),
    array_agg(parsed ORDER BY c.oid)
  FROM pg_ts_config c, websearch_to_tsquery(c.oid::regconfig, q) AS parsed
  WHERE c.cfgname LIKE 'newsdesk\\_%'
$$;

-- Every way any configuration reads the query, OR-ed (m0005), now with the prefixes.
CREATE OR REPLACE FUNCTION newsdesk_search_any(q text) RETURNS tsquery
LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT string_agg(DISTINCT '(' || parsed::text || ')', ' | ')::tsquery
  FROM newsdesk_search_parses(q) AS p, unnest(p.queries) AS parsed
  WHERE numnode(parsed) > 0
$$;
"""


forwards = sql_migration(ID, DESCRIPTION, SQL)
