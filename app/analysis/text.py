"""Words and sentences of plain text: the pure pieces the local analyser is made of.

Words are runs of letters, lower-cased: the same tokens PostgreSQL's 'simple'
text-search configuration makes of letters, so a term counted here can be
looked up in the `search` column.
"""

from __future__ import annotations

import math
import re

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


def word_count(text: str) -> int:
    """len(words(text)), at a third of the cost: a whitespace-separated token of
    letters only is one word; only the others go through the regex."""
    count = 0
    for token in text.split():
        count += 1 if token.isalpha() else len(_WORD.findall(token))
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
