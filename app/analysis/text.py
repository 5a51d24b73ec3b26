"""Words and sentences of plain text: the pure pieces the local analyser is made of.

Words are runs of letters, lower-cased: the same tokens PostgreSQL's 'simple'
text-search configuration makes of letters, so a term counted here can be
looked up in an article's search vector.
"""

from __future__ import annotations

import functools
import math
import re
import string

WORDS_PER_MINUTE = 230

_WORD = re.compile(r"[^\W\d_]+")
_PARAGRAPH = re.compile(r"\n\s*\n|\n(?=\s*[-*•])")
# A sentence ends at . ! ? … (and closing quotes or brackets), before whitespace
# and something that can start a sentence.
_BOUNDARY = re.compile(r"(?<=[.!?…])[\"'”’»)\]]*\s+(?=[\"'“‘«(\[]?[^\W_a-z])")
# Tokens that end in a period without ending a sentence.
_ABBREVIATIONS = (
    "mr mrs ms dr prof st jr sr inc ltd co corp vs etc eg ie al fig no nr vol ca bzw "
    "usw vgl ggf dt jh hr fr mme mlle sra sig dott z b u a d h"
)
ABBREVIATIONS = frozenset(_ABBREVIATIONS.split())


def words(text: str) -> list[str]:
    """The words of `text` as written (case kept)."""
    return _WORD.findall(text)


def first_words(text: str, limit: int) -> list[str]:
    """words(text)[:limit], reading no further than it needs, at a fraction of the cost.

    As in count_matches: every ASCII character but a letter separates words, so a run of
    ASCII letters between them is one word, split off in C; only the runs holding a
    non-ASCII character go through the pattern.
    """
    raw = text.encode("utf-8", "surrogatepass").translate(_separators_to_spaces(b""))
    rest = raw.decode("utf-8", "surrogatepass")
    found: list[str] = []
    while rest and len(found) < limit:
        # No more runs than words still wanted (an ASCII run is one word), and the rest.
        wanted = limit - len(found)
        runs = rest.split(None, wanted)
        rest = runs.pop() if len(runs) > wanted else ""
        if all(map(str.isascii, runs)):
            found += runs
            continue
        for run in runs:
            found += [run] if run.isascii() else _WORD.findall(run)
    return found[:limit]


def word_count(text: str) -> int:
    """len(words(text)), without listing them (count_matches)."""
    return count_matches(text, _WORD)


@functools.cache
def _separators_to_spaces(joiners: bytes) -> bytes:
    """A bytes.translate table: ASCII letters, `joiners` and non-ASCII bytes kept, the rest spaces."""
    kept = set(string.ascii_letters.encode()) | set(joiners) | set(range(0x80, 0x100))
    return bytes(b if b in kept else 0x20 for b in range(256))


_NOT_ASCII_LETTER = re.compile(rb"[^ A-Za-z]")


def count_matches(text: str, pattern: re.Pattern[str], joiners: str = "") -> int:
    """len(pattern.findall(text)) for a pattern of words whose matches hold only letters,
    the ASCII `joiners` and non-ASCII characters - at a fraction of the cost.

    Every other ASCII character separates matches, so it becomes a space; a run of
    ASCII letters between spaces is then exactly one match, and those (most of any
    text in a Latin script) are counted in C. Only the runs holding a joiner or a
    non-ASCII character go through the pattern. Articles run to 20,000 words.
    """
    raw = text.encode("utf-8", "surrogatepass").translate(
        _separators_to_spaces(joiners.encode("ascii"))
    )
    count = len(raw.split())
    found = _NOT_ASCII_LETTER.search(raw)
    while found is not None:
        start = raw.rfind(b" ", 0, found.start()) + 1
        end = raw.find(b" ", found.start())
        end = len(raw) if end < 0 else end
        run = raw[start:end].decode("utf-8", "surrogatepass")
        count += len(pattern.findall(run)) - 1
        found = _NOT_ASCII_LETTER.search(raw, end)
    return count


def reading_minutes(text: str) -> int:
    """Minutes to read `text` at 230 words a minute, at least 1."""
    return max(1, math.ceil(word_count(text) / WORDS_PER_MINUTE))


def sentences(text: str) -> list[str]:
    """Sentences in order; paragraphs and list items never run into each other."""
    out: list[str] = []
    for paragraph in _PARAGRAPH.split(text):
        flat = " ".join(paragraph.split())
        if flat:
            out.extend(_split_paragraph(flat))
    return out


def _split_paragraph(paragraph: str) -> list[str]:
    pieces: list[str] = []
    start = 0
    for match in _BOUNDARY.finditer(paragraph):
        candidate = paragraph[start : match.start()]
        if _ends_with_abbreviation(candidate):
            continue
        pieces.append(candidate.strip())
        start = match.end()
    pieces.append(paragraph[start:].strip())
    return [p for p in pieces if p]


def _ends_with_abbreviation(candidate: str) -> bool:
    if not candidate.endswith("."):
        return False
    last = candidate[:-1].rsplit(" ", 1)[-1].rsplit(".", 1)[-1].lower()
    return len(last) == 1 or last in ABBREVIATIONS
