"""The local analyser: deterministic, offline, explainable.

- language: the function-word detector, else the page's declared language;
- reading time: words / 230 a minute, at least one minute;
- keywords: TF-IDF - how often a term occurs in this article, times the log
  of how rare it is among the workspace's articles (document frequencies come
  from the articles' search vectors in PostgreSQL, `DocumentFrequencies`);
- summary: the three sentences whose words weigh most, in their original order.

`candidate_terms` and `analyse` are pure; the service looks the candidates'
document frequencies up in between. The same input gives the same result.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass

from app.analysis import language as lang
from app.analysis import text as txt
from app.analysis.types import AnalysisInput, AnalysisResult, DocumentFrequencies

NAME = "local-v1"
CANDIDATES = 40  # terms whose document frequency is looked up
KEYWORDS = 8
SUMMARY_SENTENCES = 3
MIN_TERM_LENGTH = 3
MIN_SENTENCE_WORDS = 6
MAX_SENTENCE_WORDS = 60
MAX_SUMMARY_CHARS = 1200
LONG_ARTICLE_WORDS = 200  # above this, a term said only once is not a keyword


@dataclass(frozen=True)
class Terms:
    """How often each candidate term occurs, and the way it is most often written."""

    counts: Counter[str]
    spelling: dict[str, str]  # lower-cased term -> most frequent written form
    words: int  # all words of the article


# Words too common in news prose to describe what one article is about, beyond
# the function words the language detector knows.
_COMMON = """
said says say told according now one two three four five first last new year years day days
week time many much more most also just like well even still then very would could should may
might must will can cannot get got make made take took other others some such own same any each
every only about after before over under while where when what which who whom whose why how
there here they them these those percent per cent mr mrs ms
sagte sagt sei seien mehr neue neuen jahr jahre jahren heute immer bereits sowie dabei damit
dann doch etwa gibt ganz schon sehr viele vielen wenn weil diese dieser dieses diesem diesen
kein keine keinen man mal nun gegen unter seit soll sollen
dit dont mais avait selon plus très aussi entre après avant
dijo según años año también está anni anno secondo
until again near since through during without within across among against around upon onto
toward towards between because although though whether yet already almost always never often
another ever perhaps rather quite back away
bis alle allem allen aller alles hier dort nach vor wieder zwischen ohne durch während sondern
jedoch zwar obwohl seine seiner ihre ihrem ihren ihrer unsere uns euch
dessus dessous depuis pendant sans sous vers chez leurs ainsi alors encore déjà toujours jamais
cela ceci celui celle ceux elles
desde hasta antes después durante hacia contra ellos ellas nuestro nuestra otros otras otro otra
cada mismo aún todavía siempre nunca aquí allí
agli sugli sui sulla sulle sullo negli nei nelle nello dagli dai dalla dalle dallo alle allo ai
loro altri altre altro altra ogni fanno anche ancora già sempre molto dopo prima durante senza
sotto sopra verso presso così quando mentre però quindi
até depois sem eles elas nosso nossa outros outras ainda sempre nunca aqui
tot sinds tijdens zonder onder boven tussen alle hier daar weer
على حتى في من إلى عن مع هذا هذه التي الذي كان قد
вже ще це як що та для після перед також уже еще это как что после также
"""
COMMON_WORDS: frozenset[str] = frozenset(_COMMON.split())
STOP = lang.ALL_STOP_WORDS | COMMON_WORDS
# Scripts written without spaces (Chinese, Japanese, Thai): a run of their letters is a phrase
# or a sentence, not a word, and no keyword.
_UNSPACED = re.compile("[\u0e00-\u0e7f\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff]")


def _is_term(word: str) -> bool:
    lowered = word.lower()
    return len(lowered) >= MIN_TERM_LENGTH and lowered not in STOP and not _UNSPACED.search(word)


def _spelling(forms: Counter[str]) -> str:
    """The most frequent written form; on a tie the lower-case one (a capital at the
    start of a sentence does not make a name)."""
    return min(forms.items(), key=lambda kv: (-kv[1], kv[0] != kv[0].lower(), kv[0]))[0]


def count_terms(article: AnalysisInput) -> Terms:
    body = txt.words(article.full_text)
    title = txt.words(article.title)
    counts: Counter[str] = Counter()
    forms: dict[str, Counter[str]] = {}
    # The headline names what the article is about, so its words count twice;
    # headlines are often in title case, so only the body decides the spelling.
    for word in title * 2:
        if _is_term(word):
            counts[word.lower()] += 1
    for word in body:
        if _is_term(word):
            counts[word.lower()] += 1
            forms.setdefault(word.lower(), Counter())[word] += 1
    for word in title:
        forms.setdefault(word.lower(), Counter({word: 1}))
    spelling = {key: _spelling(forms[key]) for key in counts}
    return Terms(counts=counts, spelling=spelling, words=len(body))


def candidate_terms(terms: Terms) -> list[str]:
    """The most frequent terms, whose document frequencies decide the keywords."""
    ranked = sorted(terms.counts.items(), key=lambda kv: (-kv[1], kv[0]))
    return [term for term, _n in ranked[:CANDIDATES]]


def weights(terms: Terms, frequencies: DocumentFrequencies) -> dict[str, float]:
    """TF-IDF of each candidate: tf x (log((1 + N) / (1 + df)) + 1), smoothed so a
    workspace of one article still ranks by frequency."""
    total = max(frequencies.total, 1)
    out: dict[str, float] = {}
    for term in candidate_terms(terms):
        df = min(frequencies.counts.get(term, 1), total)
        out[term] = terms.counts[term] * (math.log((1 + total) / (1 + df)) + 1)
    return out


def keywords(terms: Terms, scored: dict[str, float]) -> tuple[str, ...]:
    min_count = 2 if terms.words > LONG_ARTICLE_WORDS else 1
    ranked = sorted(
        (kv for kv in scored.items() if terms.counts[kv[0]] >= min_count),
        key=lambda kv: (-kv[1], kv[0]),
    )
    return tuple(terms.spelling[term] for term, _w in ranked[:KEYWORDS])


def summary(full_text: str, scored: dict[str, float]) -> str:
    """The best-weighted sentences (by keyword weight per sqrt of length), in order."""
    found = txt.sentences(full_text)
    usable = [
        (i, s)
        for i, s in enumerate(found)
        if MIN_SENTENCE_WORDS <= txt.word_count(s) <= MAX_SENTENCE_WORDS
    ] or list(enumerate(found))

    def score(sentence: str) -> float:
        found_words = [w.lower() for w in txt.words(sentence)]
        if not found_words:
            return 0.0
        return sum(scored.get(w, 0.0) for w in found_words) / math.sqrt(len(found_words))

    best = sorted(usable, key=lambda item: (-score(item[1]), item[0]))[:SUMMARY_SENTENCES]
    chosen = " ".join(s for _i, s in sorted(best))
    return chosen if len(chosen) <= MAX_SUMMARY_CHARS else chosen[: MAX_SUMMARY_CHARS - 1] + "…"


def detect_language(article: AnalysisInput) -> str:
    sample = txt.first_words(article.full_text, lang.SAMPLE_WORDS)
    return lang.detect(sample) or lang.declared(article.language)


def analyse(
    article: AnalysisInput, terms: Terms, frequencies: DocumentFrequencies
) -> AnalysisResult:
    scored = weights(terms, frequencies)
    full_text = article.full_text
    return AnalysisResult(
        summary=summary(full_text, scored),
        keywords=keywords(terms, scored),
        language=detect_language(article),
        reading_minutes=txt.reading_minutes(full_text),
        analyser=NAME,
    )
