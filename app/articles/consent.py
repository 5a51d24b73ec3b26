"""Is the text we extracted the article, or a wall in front of it? Pure deciding functions.

Three questions, each answered from strings only (no I/O, no HTML parsing),
so they are tested table by table:

- `consent_wall`: a consent platform is on the page (its script, element ids
  or class names) AND the text we could read is short AND dominated by
  consent wording (cookies, partners, accept...). Markers alone mean
  nothing: most sites load a consent script beside a perfectly readable
  article. Wording alone means nothing either: an article about cookie law
  is long and mostly about other things.
- `paywall`: a paywall sign (JSON-LD `isAccessibleForFree: false`,
  "subscribe to continue" phrases) AND short text; a paywall vendor's class
  name alone counts only when the text that came out stops mid-sentence.
- `block_page`: the page is an error or a bot check that answered 200.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import islice

from app.analysis.text import count_matches

# Consent platforms: name -> fragments of script src, element id or class
# names they put on a page (lower case).
CONSENT_PLATFORMS: dict[str, tuple[str, ...]] = {
    "onetrust": ("onetrust", "optanon", "cookielaw.org", "otsdkstub"),
    "didomi": ("didomi", "privacy-center.org"),
    "quantcast": ("quantcast.mgr.consensu.org", "cmp.quantcast.com", "qc-cmp2", "qc-cmp-ui"),
    "sourcepoint": ("sp_message_container", "sourcepoint", "privacy-mgmt.com", "sp-prod.net"),
    "trustarc": ("trustarc", "truste-", "truste.com", "teconsent"),  # not "trusted"
    "usercentrics": ("usercentrics",),
    "cookiebot": ("cookiebot", "cybotcookiebot"),
    "borlabs": ("borlabs-cookie", "borlabscookie"),
    "cookieyes": ("cookieyes", "cky-consent", "cookie-law-info"),
    "iubenda": ("iubenda", "iub-cs"),
    "consentmanager": ("consentmanager", "cmpbox"),
    "complianz": ("cmplz",),
    "klaro": ("klaro",),
    "osano": ("osano",),
    "google-funding-choices": ("fundingchoicesmessages", "fc-consent-root"),
    "axeptio": ("axeptio",),
    "termly": ("termly",),
    "cookiefirst": ("cookiefirst",),
}


def vocabulary(*lines: str) -> frozenset[str]:
    """A word list written as running text."""
    return frozenset(" ".join(lines).split())


# Consent wording per language (lower case, whole words). Small on purpose:
# words a consent dialog is made of and an article rarely repeats.
CONSENT_WORDS: dict[str, frozenset[str]] = {
    "en": vocabulary(
        "cookie cookies consent consents accept accepting agree partners partner vendors "
        "vendor privacy personalised personalized advertising ads preferences settings "
        "purposes legitimate interest interests device storage processing tracking "
        "measurement withdraw reject manage policy data"
    ),
    "de": vocabulary(
        "cookie cookies einwilligung einwilligen zustimmung zustimmen akzeptieren "
        "partner datenschutz datenschutzerklärung personalisierte werbung einstellungen "
        "zwecke verarbeitung daten widerrufen widerruf berechtigtes interesse "
        "speichern endgerät tracking ablehnen anbieter drittanbieter"
    ),
    "fr": vocabulary(
        "cookie cookies consentement consentir accepter acceptez partenaires partenaire "
        "confidentialité paramètres paramétrer publicité publicités personnalisées "
        "personnalisée données finalités traitement intérêt légitime refuser "
        "retirer stocker appareil traceurs politique"
    ),
    "es": vocabulary(
        "cookie cookies consentimiento consiento aceptar acepto socios privacidad "
        "configuración configurar publicidad personalizada personalizados datos "
        "finalidades tratamiento interés legítimo rechazar retirar almacenar "
        "dispositivo política proveedores"
    ),
    "it": vocabulary(
        "cookie consenso acconsenti accetta accetto accettare partner privacy "
        "impostazioni pubblicità personalizzata personalizzati dati finalità "
        "trattamento interesse legittimo rifiuta rifiutare revocare archiviare "
        "dispositivo informativa fornitori"
    ),
}
_ALL_CONSENT_WORDS = frozenset().union(*CONSENT_WORDS.values())

# A page whose readable text is longer than this is an article, whatever else it shows.
CONSENT_MAX_WORDS = 400
# At least this share of the words must be consent wording ...
CONSENT_MIN_RATIO = 0.12
# ... and at least this many of them (a two-word "Accept cookies" button is no wall).
CONSENT_MIN_HITS = 5

# Han, Hiragana and Katakana are written without spaces; two characters
# count as one word there (about how reading speed compares).
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_LETTERS = rf"[^\W\d_{_CJK}]+"  # letters, CJK excepted: one character class, no look-ahead
_WORD = re.compile(rf"[{_CJK}]{{1,2}}|{_LETTERS}(?:['’]{_LETTERS})?")


def words(text: str) -> list[str]:
    """The words of `text`, lower case (letters only; numbers and punctuation dropped)."""
    return [w.lower() for w in _WORD.findall(text)]


def count_words(text: str) -> int:
    """len(words(text)), without listing them (articles run to 20,000 words)."""
    return count_matches(text, _WORD, joiners="'")


def consent_platforms(markers: Iterable[str]) -> list[str]:
    """Which consent platforms the page's script srcs, ids and class names name."""
    haystack = " ".join(markers).lower()
    return [
        name for name, needles in CONSENT_PLATFORMS.items() if any(n in haystack for n in needles)
    ]


@dataclass(frozen=True)
class ConsentVerdict:
    wall: bool
    platforms: tuple[str, ...]  # consent platforms found on the page
    # Share of consent wording in the text's first CONSENT_MAX_WORDS + 1 words
    # (0 without a platform: not judged).
    ratio: float


def consent_wall(
    markers: Iterable[str], text: str, word_count: int | None = None
) -> ConsentVerdict:
    """A probable consent wall: a platform's markers plus short text full of consent wording.

    `word_count`: `count_words(text)`, when the caller has it; a text too long to be a
    wall is then not read at all (its ratio is 0: not judged)."""
    platforms = tuple(consent_platforms(markers))
    if not platforms:  # no wall without a platform: spare reading a long article's words
        return ConsentVerdict(False, (), 0.0)
    if word_count is not None and word_count > CONSENT_MAX_WORDS:
        return ConsentVerdict(False, platforms, 0.0)
    # One word past the limit is enough to know the text is too long to be a wall:
    # most sites load a consent script beside their 5,000-word articles.
    found = islice(_WORD.finditer(text), CONSENT_MAX_WORDS + 1)
    tokens = [match.group().lower() for match in found]
    hits = sum(1 for w in tokens if w in _ALL_CONSENT_WORDS)
    ratio = hits / len(tokens) if tokens else 0.0
    wall = (
        len(tokens) <= CONSENT_MAX_WORDS and hits >= CONSENT_MIN_HITS and ratio >= CONSENT_MIN_RATIO
    )
    return ConsentVerdict(wall, platforms, round(ratio, 3))


# Paywalls -------------------------------------------------------------------

# `"isAccessibleForFree": false` (JSON-LD, also as a string) or the microdata form,
# matched only where the name occurs: a regex over a whole 5 MB page costs more
# than the rest of its extraction, `str.find` on the usual spellings does not.
_NOT_FREE_NAMES = ("isAccessibleForFree", "isaccessibleforfree", "ISACCESSIBLEFORFREE")
_NOT_FREE_VALUE = re.compile(
    r"""["']?\s*(?::\s*["']?false\b|[^>]{0,300}?\bcontent\s*=\s*["']false)""",
    re.IGNORECASE,
)
PAYWALL_CLASSES: tuple[str, ...] = (
    "paywall",
    "pay-wall",
    "regwall",
    "metered-content",
    "meteredcontent",
    "premium-content",
    "subscriber-only",
    "subscribers-only",
    "article-locked",
    "content-locked",
    "tp-modal",  # Piano
    "piano-",
    "laterpay",
    "poool",
    "zephr",
)
PAYWALL_PHRASES: dict[str, tuple[str, ...]] = {
    "en": (
        "subscribe to continue reading",
        "subscribe to read",
        "subscribe to keep reading",
        "this article is for subscribers",
        "this content is for subscribers",
        "already a subscriber",
        "to continue reading, subscribe",
        "sign in to continue reading",
        "become a member to read",
    ),
    "de": (
        "jetzt abonnieren und weiterlesen",
        "weiterlesen mit",
        "dieser artikel ist exklusiv",
        "exklusiv für abonnenten",
        "nur für abonnenten",
        "bereits abonnent",
        "schon abonnent",
        "um weiterzulesen",
    ),
    "fr": (
        "réservé aux abonnés",
        "abonnez-vous pour lire",
        "abonnez-vous pour continuer",
        "déjà abonné",
        "la suite est réservée",
    ),
    "es": (
        "exclusivo para suscriptores",
        "suscríbete para seguir leyendo",
        "suscríbete para continuar",
        "ya eres suscriptor",
        "contenido para suscriptores",
    ),
    "it": (
        "riservato agli abbonati",
        "abbonati per continuare",
        "abbonati per leggere",
        "sei già abbonato",
        "contenuto riservato",
    ),
}
_ALL_PAYWALL_PHRASES = tuple(p for phrases in PAYWALL_PHRASES.values() for p in phrases)
# Text shorter than this next to a paywall marker is a teaser, not the article.
PAYWALL_TRUNCATED_WORDS = 350


@dataclass(frozen=True)
class PaywallVerdict:
    paywall: bool
    signals: tuple[str, ...]  # what was seen: "json-ld", "class:<name>", "phrase:<text>"


def paywall(
    raw_html: str, markers: Iterable[str], page_text: str, text: str, word_count: int
) -> PaywallVerdict:
    """A probable paywall: a sign of one, and extracted `text` that reads like a teaser.

    Signs: `raw_html`'s JSON-LD/microdata flag, a "subscribe to continue"
    phrase in `page_text` (everything visible) or the extracted `text` (of
    `word_count` words), and
    paywall class names among `markers`. A class name only names a vendor
    that many sites load beside complete articles, so on its own it counts
    only when the text that came out stops mid-sentence. Text of
    PAYWALL_TRUNCATED_WORDS or more is the article: nothing is searched then.
    """
    if word_count >= PAYWALL_TRUNCATED_WORDS:
        return PaywallVerdict(False, ())
    signals: list[str] = []
    if not_free(raw_html):
        signals.append("json-ld")
    lowered = " ".join(f"{text} {page_text}".lower().split())
    signals += [f"phrase:{p}" for p in _ALL_PAYWALL_PHRASES if p in lowered]
    haystack = " ".join(markers).lower()
    classes = [f"class:{name}" for name in PAYWALL_CLASSES if name in haystack]
    decisive = bool(signals) or (bool(classes) and cut_short(text))
    return PaywallVerdict(decisive, tuple(signals + classes))


def not_free(raw_html: str) -> bool:
    """Whether the page says `isAccessibleForFree: false` (JSON-LD or microdata)."""
    for name in _NOT_FREE_NAMES:
        at = raw_html.find(name)
        while at >= 0:
            end = at + len(name)
            if _NOT_FREE_VALUE.match(raw_html, end, end + 400):
                return True
            at = raw_html.find(name, end)
    return False


# How a complete text ends: a sentence mark, maybe inside quotes or brackets.
_SENTENCE_END = re.compile(r"""[.!?。！？…"'”’»)\]]\s*$""")


def cut_short(text: str) -> bool:
    """Whether the text stops mid-sentence or trails off ("…", "..."), as teasers do."""
    tail = text.rstrip()
    if not tail:
        return True
    return tail.endswith(("…", "...")) or not _SENTENCE_END.search(tail[-3:])


# Block and error pages that answered 200 ---------------------------------------

# Reason -> (whole titles, before any " | Site name"; phrases in the text).
BLOCK_SIGNS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "not_found": (
        (
            "page not found",
            "404 not found",
            "not found",
            "404",
            "error 404",
            "seite nicht gefunden",
            "page introuvable",
            "página no encontrada",
            "pagina non trovata",
        ),
        (
            "the page you are looking for",
            "the page you requested could not be found",
            "this page doesn't exist",
            "this page does not exist",
            "die angeforderte seite wurde nicht gefunden",
        ),
    ),
    "blocked": (
        (
            "access denied",
            "403 forbidden",
            "forbidden",
            "just a moment...",
            "attention required!",
            "are you a robot?",
            "are you a human?",
            "verify you are human",
            "captcha",
            "too many requests",
            "service unavailable",
            "bad gateway",
            "internal server error",
        ),
        (
            "enable javascript and cookies to continue",
            "checking your browser before accessing",
            "verify you are a human",
            "press & hold to confirm you are",
            "you don't have permission to access",
            "request blocked",
        ),
    ),
}
# A real article that happens to mention "not found" is longer than this.
BLOCK_MAX_WORDS = 150
_TITLE_SEPARATOR = re.compile(r"\s[|·–—-]\s")


def block_page(title: str, text: str, word_count: int) -> str | None:
    """Why a short 200 page is an error or a bot check ("not_found", "blocked"), else None."""
    if word_count > BLOCK_MAX_WORDS:
        return None
    # Site names often follow a separator: "Page not found | Example News".
    head = _TITLE_SEPARATOR.split(" ".join(title.lower().split()), maxsplit=1)[0].strip()
    lowered = " ".join(text.lower().split())
    for reason, (titles, phrases) in BLOCK_SIGNS.items():
        if head in titles or any(p in lowered for p in phrases):
            return reason
    return None
