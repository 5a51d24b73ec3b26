"""Search that finds what people type: accents folded, words stemmed in the article's language.

Every text search configuration here is `newsdesk_<name>`: PostgreSQL's own
for that language (its Snowball stemmer and stop words) with `unaccent` in
front, so `zurich` finds `Zürich` and `running` finds `runs`. A language
PostgreSQL has no stemmer for, or none at all, is read with
`newsdesk_simple` (unaccented, nothing stemmed). `newsdesk_search_config`
maps an article's ISO 639-1 code to its configuration;
`newsdesk_search_any` ORs a query's parses in all of them (the index finds
candidates with it; each is then matched with its own language's parse);
`newsdesk_search_vector` builds the indexed vector with a gap of 100
positions between title, byline/site and text, so a phrase never matches
across them. Dropping and re-adding the generated column rebuilds every
row's vector and the index. The order of the library's default sort (the
article's own date) gets its index too.
"""

from app.core.db import sql_migration

ID = "2026-12-01T05:00:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "search: unaccent, stemming per language, title/text gap; date-ordered index"

# ISO 639-1 -> PostgreSQL's configuration (and Snowball dictionary) name.
LANGUAGES = {
    "ar": "arabic",
    "hy": "armenian",
    "eu": "basque",
    "ca": "catalan",
    "da": "danish",
    "nl": "dutch",
    "en": "english",
    "fi": "finnish",
    "fr": "french",
    "de": "german",
    "el": "greek",
    "hi": "hindi",
    "hu": "hungarian",
    "id": "indonesian",
    "ga": "irish",
    "it": "italian",
    "lt": "lithuanian",
    "ne": "nepali",
    "no": "norwegian",
    "nb": "norwegian",
    "nn": "norwegian",
    "pt": "portuguese",
    "ro": "romanian",
    "ru": "russian",
    "sr": "serbian",
    "es": "spanish",
    "sv": "swedish",
    "ta": "tamil",
    "tr": "turkish",
    "yi": "yiddish",
}
NAMES = sorted(set(LANGUAGES.values()))
TOKENS = "asciiword, asciihword, hword_asciipart, word, hword, hword_part"

_CASES = "\n".join(
    f"    WHEN '{code}' THEN 'newsdesk_{name}'::regconfig" for code, name in LANGUAGES.items()
)
_NAMES = ", ".join(f"'{name}'" for name in NAMES)

SQL = f"""
CREATE EXTENSION IF NOT EXISTS unaccent;

CREATE TEXT SEARCH CONFIGURATION newsdesk_simple (COPY = simple);
ALTER TEXT SEARCH CONFIGURATION newsdesk_simple
  ALTER MAPPING FOR {TOKENS} WITH unaccent, simple;

-- A language whose stemmer this PostgreSQL lacks reads as newsdesk_simple.
DO $$
DECLARE name text;
BEGIN
  FOREACH name IN ARRAY ARRAY[{_NAMES}] LOOP
    IF EXISTS (SELECT 1 FROM pg_ts_dict WHERE dictname = name || '_stem')
       AND EXISTS (SELECT 1 FROM pg_ts_config WHERE cfgname = name) THEN
      EXECUTE format('CREATE TEXT SEARCH CONFIGURATION %I (COPY = %I)', 'newsdesk_' || name, name);
      EXECUTE format('ALTER TEXT SEARCH CONFIGURATION %I ALTER MAPPING FOR {TOKENS} WITH unaccent, %I',
                     'newsdesk_' || name, name || '_stem');
    ELSE
      EXECUTE format('CREATE TEXT SEARCH CONFIGURATION %I (COPY = newsdesk_simple)', 'newsdesk_' || name);
    END IF;
  END LOOP;
END $$;

CREATE FUNCTION newsdesk_search_config(language text) RETURNS regconfig
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE lower(split_part(replace(coalesce(language, ''), '_', '-'), '-', 1))
{_CASES}
    ELSE 'newsdesk_simple'::regconfig
  END
$$;

-- Every way any configuration reads a query, OR-ed: a superset of each
-- article's own parse, so one GIN lookup finds the candidates, and only those
-- are matched exactly with the query as their own language reads it. NULL
-- (nothing matches) when the query is only stop words or punctuation.
CREATE FUNCTION newsdesk_search_any(q text) RETURNS tsquery
LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT string_agg(DISTINCT '(' || parsed::text || ')', ' | ')::tsquery
  FROM pg_ts_config c, websearch_to_tsquery(c.oid::regconfig, q) AS parsed
  WHERE c.cfgname LIKE 'newsdesk\\_%' AND numnode(parsed) > 0
$$;

-- Title (A), byline and site (C), text (B), 100 positions apart: a phrase
-- query never runs from the end of the title into the first line of the text.
CREATE FUNCTION newsdesk_search_vector(
  language text, title text, byline text, site_name text, body text
) RETURNS tsvector
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT ts_delete(
    setweight(to_tsvector(newsdesk_search_config(language), coalesce(title, '')), 'A')
    || '''newsdesk gap'':100'::tsvector
    || setweight(to_tsvector(newsdesk_search_config(language),
                             coalesce(byline, '') || ' ' || coalesce(site_name, '')), 'C')
    || '''newsdesk gap'':100'::tsvector
    || setweight(to_tsvector(newsdesk_search_config(language), left(coalesce(body, ''), 400000)), 'B'),
    'newsdesk gap')
$$;

ALTER TABLE articles DROP COLUMN search;
ALTER TABLE articles ADD COLUMN search tsvector GENERATED ALWAYS AS (
  newsdesk_search_vector(language, title, byline, site_name, text)
) STORED;
CREATE INDEX articles_search ON articles USING gin (search);
CREATE INDEX articles_dated ON articles
  (workspace_id, (least(published_at, created_at)) DESC, id DESC);
"""


forwards = sql_migration(ID, DESCRIPTION, SQL)
