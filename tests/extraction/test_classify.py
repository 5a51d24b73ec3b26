"""The deciding functions of extraction, table by table: consent walls, paywalls, block pages."""

from __future__ import annotations

import pytest

from app.analysis.text import word_count
from app.analysis.text import words as analysis_words
from app.articles.consent import (
    CONSENT_MAX_WORDS,
    CONSENT_MIN_RATIO,
    PAYWALL_TRUNCATED_WORDS,
    block_page,
    consent_platforms,
    consent_wall,
    count_words,
    not_free,
    paywall,
    words,
)

ONETRUST = ["https://cdn.cookielaw.org/scripttemplates/otSDKStub.js", "onetrust-banner-sdk"]
DIDOMI = ["https://sdk.privacy-center.org/loader.js", "didomi-host"]

CONSENT_TEXT = {
    "en": "We and our partners store and access information on your device, such as cookies, "
    "and process personal data for personalised advertising and content measurement. You can "
    "accept, reject or manage your preferences and withdraw consent at any time. Some partners "
    "rely on legitimate interest. See our privacy policy.",
    "de": "Wir und unsere Partner verwenden Cookies, um Informationen auf Ihrem Endgerät zu "
    "speichern. Mit Ihrer Zustimmung verarbeiten wir Daten für personalisierte Werbung. Sie "
    "können Ihre Einwilligung in den Einstellungen widerrufen. Mehr in der Datenschutzerklärung. "
    "Akzeptieren oder ablehnen.",
    "fr": "Avec votre accord, nos partenaires et nous utilisons des cookies pour stocker et "
    "accéder à des informations sur votre appareil. Vous pouvez retirer votre consentement ou "
    "refuser le traitement fondé sur l'intérêt légitime. Paramétrer les cookies. Accepter. "
    "Politique de confidentialité, publicité personnalisée, données.",
    "es": "Nosotros y nuestros socios usamos cookies para almacenar información en su "
    "dispositivo y tratar datos para publicidad personalizada. Puede aceptar, rechazar o "
    "retirar su consentimiento en la configuración. Algunos socios alegan interés legítimo. "
    "Política de privacidad.",
    "it": "Noi e terze parti selezionate utilizziamo cookie per finalità tecniche e, con il tuo "
    "consenso, per altre finalità. Trattiamo dati per pubblicità personalizzata. Puoi rifiutare "
    "o revocare il consenso nelle impostazioni. Accetta. Informativa privacy, interesse "
    "legittimo dei fornitori.",
}

ARTICLE_TEXT = (
    "Six councils along the River Wend have agreed to pool their river sensors, sirens and "
    "text alerts into a single flood warning system, ending a patchwork that residents said left "
    "them guessing during last winter's floods. The joint scheme was approved on Monday evening "
    "and will cost an estimated two million pounds over four years. Most of the money goes on "
    "forty new water-level sensors and a shared control room."
)


@pytest.mark.parametrize(
    ("markers", "expected"),
    [
        (ONETRUST, ["onetrust"]),
        (DIDOMI, ["didomi"]),
        (["https://quantcast.mgr.consensu.org/cmp.js", "qc-cmp2-container"], ["quantcast"]),
        (["sp_message_container_123", "https://cdn.privacy-mgmt.com/wrapper.js"], ["sourcepoint"]),
        (["https://consent.trustarc.com/notice", "teconsent"], ["trustarc"]),
        (
            ["usercentrics-root", "https://app.usercentrics.eu/browser-ui/latest/loader.js"],
            ["usercentrics"],
        ),
        (["CybotCookiebotDialog", "https://consent.cookiebot.com/uc.js"], ["cookiebot"]),
        (["BorlabsCookie", "borlabs-cookie-box"], ["borlabs"]),
        (
            ["cky-consent-container", "https://cdn-cookieyes.com/client_data/x/script.js"],
            ["cookieyes"],
        ),
        (["//cdn.iubenda.com/cs/iubenda_cs.js", "iubenda-cs-banner"], ["iubenda"]),
        (["header", "main-nav", "https://cdn.example.org/app.js"], []),
        (["trusted-partners", "entrusted"], []),
        ([*ONETRUST, *DIDOMI], ["onetrust", "didomi"]),
    ],
)
def test_consent_platforms_are_named_from_script_sources_ids_and_classes(markers, expected):
    assert consent_platforms(markers) == expected


@pytest.mark.parametrize("language", sorted(CONSENT_TEXT))
def test_short_consent_wording_with_a_platform_is_a_wall_in_each_language(language):
    verdict = consent_wall(DIDOMI, CONSENT_TEXT[language])
    assert verdict.wall, verdict
    assert verdict.platforms == ("didomi",)


@pytest.mark.parametrize("language", sorted(CONSENT_TEXT))
def test_consent_wording_without_a_platform_is_no_wall(language):
    assert not consent_wall(["header", "footer"], CONSENT_TEXT[language]).wall


def test_a_platform_beside_a_readable_article_is_no_wall():
    # Most sites load a consent script next to a perfectly readable article.
    verdict = consent_wall(ONETRUST, ARTICLE_TEXT)
    assert not verdict.wall
    assert verdict.platforms == ("onetrust",)
    assert verdict.ratio < 0.05


def test_a_long_article_about_cookie_law_is_no_wall():
    long_text = (CONSENT_TEXT["en"] + " " + ARTICLE_TEXT + " ") * 8
    assert len(words(long_text)) > CONSENT_MAX_WORDS
    assert not consent_wall(ONETRUST, long_text).wall


def test_a_lone_accept_cookies_button_is_no_wall():
    assert not consent_wall(ONETRUST, "Accept cookies").wall


def test_empty_text_is_no_wall():
    assert not consent_wall(ONETRUST, "").wall


TEASER = (
    "The harbour authority wants every crane, tug and shore connection at the container "
    "terminal to run on electricity by the end of the decade."
)
CUT_TEASER = TEASER.removesuffix(" decade.") + " …"


@pytest.mark.parametrize(
    ("raw_html", "markers", "page_text", "signal"),
    [
        (
            '<script type="application/ld+json">{"isAccessibleForFree": false}</script>',
            [],
            TEASER,
            "json-ld",
        ),
        ('{"isAccessibleForFree":"False"}', [], TEASER, "json-ld"),
        ('<meta itemprop="isAccessibleForFree" content="false">', [], TEASER, "json-ld"),
        ("", ["article-body paywall"], CUT_TEASER, "class:paywall"),
        ("", ["tp-modal"], CUT_TEASER, "class:tp-modal"),
        (
            "",
            [],
            TEASER + " Subscribe to continue reading.",
            "phrase:subscribe to continue reading",
        ),
        (
            "",
            [],
            TEASER + " Jetzt abonnieren und weiterlesen",
            "phrase:jetzt abonnieren und weiterlesen",
        ),
        ("", [], TEASER + " Cet article est réservé aux abonnés.", "phrase:réservé aux abonnés"),
        (
            "",
            [],
            TEASER + " Suscríbete para seguir leyendo",
            "phrase:suscríbete para seguir leyendo",
        ),
        ("", [], TEASER + " Articolo riservato agli abbonati", "phrase:riservato agli abbonati"),
    ],
)
def test_a_paywall_marker_with_truncated_text_is_a_paywall(raw_html, markers, page_text, signal):
    text = page_text if markers else TEASER
    verdict = paywall(raw_html, markers, page_text, text, len(words(text)))
    assert verdict.paywall
    assert signal in verdict.signals


def test_a_paywall_marker_beside_the_whole_article_is_no_paywall():
    # Metered sites mark the article but send all of it; we have the text.
    verdict = paywall(
        '{"isAccessibleForFree": false}', ["paywall"], "", TEASER, PAYWALL_TRUNCATED_WORDS + 1
    )
    assert not verdict.paywall


@pytest.mark.parametrize("markers", [["piano-container"], ["tp-modal"], ["laterpay-widget"]])
def test_a_vendor_class_beside_a_complete_short_article_is_no_paywall(markers):
    # A site loads Piano or LaterPay beside a short piece it sends in full:
    # the text ends its last sentence, so the class name alone proves nothing.
    verdict = paywall("<script src=x></script>", markers, TEASER, TEASER, len(words(TEASER)))
    assert not verdict.paywall
    assert verdict.signals  # seen, kept in metadata, not decisive


@pytest.mark.parametrize("ending", ["…", "...", "to run on"])
def test_a_vendor_class_beside_text_cut_mid_sentence_is_a_paywall(ending):
    text = TEASER.removesuffix(" decade.") + " " + ending
    verdict = paywall("", ["tp-modal"], text, text, len(words(text)))
    assert verdict.paywall


def test_the_not_free_flag_is_found_in_a_large_page_without_scanning_it_with_a_regex():
    page = "<p>" + "word " * 1_000_000 + '</p><script>{"isAccessibleForFree":false}</script>'
    assert not_free(page)
    assert not not_free(page.replace(":false", ":true"))


def test_free_articles_are_no_paywall():
    verdict = paywall('{"isAccessibleForFree": true}', ["article"], TEASER, TEASER, 40)
    assert not verdict.paywall
    assert verdict.signals == ()


@pytest.mark.parametrize(
    ("title", "text", "expected"),
    [
        ("Page not found | The Courier", "Sorry.", "not_found"),
        ("404 Not Found", "", "not_found"),
        ("Seite nicht gefunden – Rhein-Echo", "", "not_found"),
        ("Home | The Courier", "The page you are looking for may have been moved.", "not_found"),
        ("Just a moment...", "Checking your browser before accessing example.org.", "blocked"),
        ("example.org", "Enable JavaScript and cookies to continue", "blocked"),
        ("Access Denied", "You don't have permission to access this server.", "blocked"),
        ("River towns vote to share one flood warning system", ARTICLE_TEXT, None),
        ("Not found: the river's missing sensors", ARTICLE_TEXT, None),
    ],
)
def test_error_and_bot_check_pages_are_recognised(title, text, expected):
    assert block_page(title, text, len(words(text))) == expected


def test_a_long_page_is_never_a_block_page():
    assert block_page("Page not found", ARTICLE_TEXT * 3, 200) is None


@pytest.mark.parametrize(
    ("text", "count"),
    [
        ("Hello, wörld! It’s 2025.", 3),
        ("Straße, Größe und Übermut", 4),
        ("川沿いの桜並木", 4),  # no spaces: two characters count as one word
        ("", 0),
    ],
)
def test_words_counts_letters_in_any_script(text, count):
    assert len(words(text)) == count


WORD_SAMPLES = [
    "",
    "The council said on Tuesday",
    "Don't stop: it’s 2025, the 3rd time (again)!",
    "Müller's Straße – naïve café, 10 km/h",
    "日本語のテキストです。東京 2025年",
    "snake_case and e-mail, ½ and ²",
    "tabs\tand\nnew lines\u00a0and no-break spaces",
    "quotes “like these” and «these» and 'these'",
    "’’ — ' x'y'z' rock'n'roll l’été",  # runs of no word at all, and of several
    "Élan au début, fin à la fin",  # non-ASCII at the very start and end
]


@pytest.mark.parametrize("text", WORD_SAMPLES)
def test_word_counts_are_the_number_of_words_listed(text):
    # The counts count ASCII words in C and only the other runs with the pattern; exact.
    assert count_words(text) == len(words(text))
    assert word_count(text) == len(analysis_words(text))


def test_a_long_text_with_a_platform_is_judged_on_its_first_words_only():
    # A wall is short: past CONSENT_MAX_WORDS the rest of an article is not read.
    long_text = CONSENT_TEXT["en"] + " river" * (CONSENT_MAX_WORDS * 20)
    verdict = consent_wall(ONETRUST, long_text)
    assert not verdict.wall
    assert 0 < verdict.ratio < CONSENT_MIN_RATIO


def test_a_text_known_to_be_long_is_not_read():
    long_text = CONSENT_TEXT["en"] + " river" * CONSENT_MAX_WORDS
    known = consent_wall(ONETRUST, long_text, count_words(long_text))
    assert (known.wall, known.platforms) == (False, consent_wall(ONETRUST, long_text).platforms)
    assert known.ratio == 0  # not judged
    # The count is only a shortcut past the limit: a short wall is judged on its words.
    short = CONSENT_TEXT["en"]
    assert consent_wall(ONETRUST, short, count_words(short)) == consent_wall(ONETRUST, short)
    assert consent_wall(ONETRUST, short).wall
