"""Extraction precision: what goes into the stored text, the paywall hint, the byline."""

from __future__ import annotations

import pytest

from app.articles.extraction import read_html
from app.articles.processing import byline_without_site, prepare
from app.articles.types import Source, Warning
from app.safe_content import Image, to_text
from tests.extraction.test_extract import nodes

STORY = " ".join(
    f"Sentence {i} of the council's flood plan says where the new sensors go." for i in range(25)
)


def page(body: str, head: str = "") -> bytes:
    return (
        f'<html lang="en"><head><title>Flood plan</title>'
        f'<meta property="og:site_name" content="Daily Planet">{head}</head>'
        f"<body><article><h1>Flood plan</h1>{body}</article></body></html>"
    ).encode()


def read(body: str, head: str = ""):
    return read_html(
        page(body, head),
        url="https://www.dailyplanet.com/flood",
        final_url="https://www.dailyplanet.com/flood",
    )


CAPTIONED = [
    '<figure><img src="https://img.example/a.jpg" alt="ALTWORD a river in spate">'
    "<figcaption>CAPTIONWORD The river at dawn. Photo: J. Olsen</figcaption></figure>",
    '<div class="wp-caption"><img src="https://img.example/a.jpg" alt="ALTWORD">'
    '<p class="wp-caption-text">CAPTIONWORD The river at dawn</p></div>',
    '<figure><div><img src="https://img.example/a.jpg" alt="ALTWORD"></div>'
    "<p>CAPTIONWORD The river at dawn.</p></figure>",
    '<div class="media"><img src="https://img.example/a.jpg" alt="ALTWORD">'
    '<span class="image-credit">CAPTIONWORD Getty</span></div>',
]


@pytest.mark.parametrize("figure", CAPTIONED)
def test_alt_text_and_captions_stay_out_of_the_stored_text(figure: str):
    extracted = read(f"<p>{STORY}</p>{figure}<p>{STORY}</p>")
    stored = prepare(extracted.scraped(Source.MANUAL))
    assert "Sentence 24 of the council" in stored.text
    assert "ALTWORD" not in stored.text
    assert "CAPTIONWORD" not in stored.text
    # The reader keeps the image.
    images = [n for n in nodes(extracted.content) if isinstance(n, Image)]
    assert [i.src for i in images] == ["https://img.example/a.jpg"]


def test_an_image_without_alt_takes_its_caption_as_alt():
    extracted = read(
        f'<p>{STORY}</p><figure><img src="https://img.example/a.jpg">'
        "<figcaption>The river at dawn</figcaption></figure>"
    )
    images = [n for n in nodes(extracted.content) if isinstance(n, Image)]
    assert [i.alt for i in images] == ["The river at dawn"]
    assert "river at dawn" not in to_text(extracted.content)


def test_a_wrapper_whose_class_says_caption_is_not_thrown_away():
    extracted = read(f'<div class="has-captions"><p>{STORY}</p><p>{STORY}</p></div>')
    assert "Sentence 24 of the council" in to_text(extracted.content)


PIANO = (
    '<script src="https://cdn.tinypass.com/api/tinypass.min.js"></script>'
    '<script>tp = window.tp || []; tp.push(["setAid", "x"]);</script>'
)


def test_a_complete_short_article_on_a_site_that_loads_a_paywall_vendor_gets_no_hint():
    short = " ".join(STORY.split()[:160]) + "."
    extracted = read(
        f'<div class="piano-offer tp-modal"></div><div class="article-body"><p>{short}</p></div>',
        head=PIANO,
    )
    assert Warning.PAYWALL not in extracted.warnings
    assert "class:tp-modal" in extracted.metadata["paywall_signals"]


def test_a_teaser_cut_mid_sentence_beside_a_paywall_vendor_gets_the_hint():
    teaser = " ".join(STORY.split()[:60]) + " and the"
    extracted = read(
        f'<div class="article-body"><p>{teaser}</p></div><div class="tp-modal"></div>', head=PIANO
    )
    assert Warning.PAYWALL in extracted.warnings


def test_a_long_article_is_not_searched_for_paywall_signs():
    body = "".join(f"<p>{part} {STORY}</p>" for part in ("One.", "Two.", "Three."))
    extracted = read(body, head='<script>{"isAccessibleForFree": false}</script>')
    assert Warning.PAYWALL not in extracted.warnings
    assert "paywall_signals" not in extracted.metadata


def test_the_byline_does_not_repeat_the_site_name():
    extracted = read(f'<p class="byline">By Lois Lane, Daily Planet</p><p>{STORY}</p>')
    assert prepare(extracted.scraped(Source.MANUAL)).byline == "Lois Lane"


@pytest.mark.parametrize(
    ("byline", "expected"),
    [
        ("Lois Lane; Daily Planet", "Lois Lane"),
        ("Daily Planet", ""),
        ("By The Daily Planet", ""),
        ("Daily Planet staff", ""),
        ("Lois Lane | dailyplanet.com", "Lois Lane"),
        ("Lois Lane (Daily Planet)", "Lois Lane"),
        ("Lois Lane for Daily Planet", "Lois Lane"),
        ("Lane, Lois", "Lane, Lois"),  # nothing to drop: kept exactly
        ("Ann Planet", "Ann Planet"),
    ],
)
def test_byline_parts_naming_the_site_are_dropped(byline: str, expected: str):
    assert byline_without_site(byline, "Daily Planet", "https://www.dailyplanet.com/x") == expected
