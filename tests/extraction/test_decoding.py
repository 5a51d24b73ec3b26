"""Bytes to text the way browsers do it, and what kind of document a response is (pure)."""

from __future__ import annotations

import codecs

import pytest

from app.articles.fetching import (
    Kind,
    codec_for,
    decode_html,
    filename_of,
    kind_of,
    meta_charset,
    title_from_filename,
)

GERMAN = "„Größere Fähren“ – sagte Jürgensen, 3,50 € für die Überfahrt."
FRENCH = "L’été sera chaud : « On n’a jamais vu ça », confie Hélène Garçon."
JAPANESE = (
    "川沿いの桜並木、今年は一週間早く満開に。気象台によると、三月の平均気温が平年を二度上回った。"
)


def page(body: str, head: str = "") -> str:
    return (
        f"<!DOCTYPE html><html><head>{head}<title>t</title></head><body><p>{body}</p></body></html>"
    )


@pytest.mark.parametrize(
    ("label", "codec"),
    [
        ("utf-8", "utf-8"),
        ("UTF8", "utf-8"),
        ("windows-1252", "cp1252"),
        # Browsers read these as windows-1252: real pages use 0x80-0x9F for quotes and €.
        ("ISO-8859-1", "cp1252"),
        ("latin1", "cp1252"),
        ("us-ascii", "cp1252"),
        ("Shift_JIS", "cp932"),
        ("gb2312", "gb18030"),
        ("no-such-charset", None),
        ("", None),
    ],
)
def test_charset_labels_map_to_the_codec_a_browser_uses(label, codec):
    assert codec_for(label) == codec


def test_the_header_charset_decodes_windows_1252():
    decoded = decode_html(page(GERMAN).encode("cp1252"), "windows-1252")
    assert GERMAN in decoded.text
    assert decoded.declared_by == "header"


@pytest.mark.parametrize(
    "head",
    [
        '<meta charset="iso-8859-1">',
        "<meta charset=ISO-8859-1>",
        '<meta http-equiv="Content-Type" content="text/html; charset=iso-8859-1">',
        "<meta content='text/html; charset=ISO-8859-1' http-equiv='content-type'>",
    ],
)
def test_a_meta_declaration_decodes_when_the_header_says_nothing(head):
    # Declared ISO-8859-1, written by a Windows editor: the curly apostrophe is 0x92.
    decoded = decode_html(page(FRENCH, head).encode("cp1252"), None)
    assert FRENCH in decoded.text
    assert decoded.declared_by == "meta"


def test_shift_jis_declared_in_meta_comes_out_right():
    decoded = decode_html(page(JAPANESE, '<meta charset="Shift_JIS">').encode("shift_jis"), None)
    assert JAPANESE in decoded.text


def test_the_header_wins_over_meta():
    body = page(GERMAN, '<meta charset="utf-8">').encode("cp1252")
    assert GERMAN in decode_html(body, "windows-1252").text


def test_a_byte_order_mark_wins_over_the_header():
    body = codecs.BOM_UTF8 + page(GERMAN).encode("utf-8")
    decoded = decode_html(body, "iso-8859-1")
    assert GERMAN in decoded.text
    assert decoded.declared_by == "bom"


@pytest.mark.parametrize(
    ("text", "encoding"),
    [(GERMAN * 3, "cp1252"), (JAPANESE * 3, "shift_jis"), (GERMAN, "utf-8")],
)
def test_undeclared_bytes_are_detected(text, encoding):
    decoded = decode_html(page(text).encode(encoding), None)
    assert text in decoded.text
    assert decoded.declared_by == "detected"


def test_a_meta_utf16_declaration_is_read_as_utf8():
    assert meta_charset(b'<meta charset="utf-16">') == "utf-8"


def test_bad_bytes_never_raise():
    assert "\ufffd" in decode_html(b"<p>\xff\xfe\xfa broken</p>", "utf-8").text


@pytest.mark.parametrize(
    ("media_type", "head", "kind"),
    [
        ("text/html", b"", Kind.HTML),
        ("application/xhtml+xml", b"", Kind.HTML),
        ("application/pdf", b"", Kind.PDF),
        ("application/octet-stream", b"%PDF-1.7\n", Kind.PDF),
        (None, b"%PDF-1.4", Kind.PDF),
        (None, b"  <!DOCTYPE html><html>", Kind.HTML),
        ("text/plain", b"<!-- x --><html lang=en>", Kind.HTML),
        ("application/json", b"{}", Kind.OTHER),
        ("image/png", b"\x89PNG", Kind.OTHER),
        ("text/plain", b"just words", Kind.OTHER),
    ],
)
def test_kind_of_a_response(media_type, head, kind):
    assert kind_of(media_type, head) == kind


@pytest.mark.parametrize(
    ("disposition", "url", "name"),
    [
        ('inline; filename="Annual_Report-2024.pdf"', "https://x.org/a", "Annual_Report-2024.pdf"),
        (
            "attachment; filename*=UTF-8''Jahresbericht%202024.pdf",
            "https://x.org/a",
            "Jahresbericht 2024.pdf",
        ),
        ('attachment; filename="../../etc/passwd"', "https://x.org/a", "passwd"),
        (None, "https://x.org/files/r%C3%A9sum%C3%A9.pdf?x=1", "résumé.pdf"),
        (None, "https://x.org/", ""),
    ],
)
def test_filename_of_a_download(disposition, url, name):
    assert filename_of(disposition, url) == name


def test_title_from_filename():
    assert title_from_filename("Annual_Report-2024.pdf") == "Annual Report 2024"
