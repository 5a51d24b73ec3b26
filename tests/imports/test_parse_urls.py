"""parse_urls: what a pasted list becomes (valid, invalid, duplicates), as tables."""

from __future__ import annotations

import pytest

from app.core.i18n import speaking
from app.imports import parse_urls

A = "https://news.example/a"
B = "https://news.example/b"


@pytest.mark.parametrize(
    ("raw", "valid"),
    [
        (f"{A}\n{B}", [A, B]),
        (f"{A}\r\n{B}\r\n", [A, B]),  # Windows newlines
        (f"{A}, {B}", [A, B]),  # commas
        (f"{A},{B}", [A, B]),  # a comma right before the next link
        (f"{A} {B}\t", [A, B]),  # spaces and tabs
        (f"<{A}>\n<{B}>", [A, B]),  # mail clients' angle brackets
        (f"See {A}. And {B}!", [A, B]),  # prose and trailing punctuation
        (f'"{A}"; ({B})', [A, B]),  # quotes and brackets
        (
            "https://en.wikipedia.org/wiki/Mercury_(planet)",
            ["https://en.wikipedia.org/wiki/Mercury_(planet)"],
        ),
        ("https://q.example/?ids=1,2,3", ["https://q.example/?ids=1,2,3"]),  # commas in a query
        (f"\n\n  {A}  \n\n", [A]),
        ("", []),
    ],
)
def test_separators_wrappers_and_punctuation(raw, valid):
    assert list(parse_urls(raw).valid) == valid


@pytest.mark.parametrize(
    ("raw", "invalid"),
    [
        ("ftp://files.example/a", ["ftp://files.example/a"]),  # http/https only
        ("javascript:alert(1)//x.y", ["javascript:alert(1)//x.y"]),
        ("javascript:alert(1)", ["javascript:alert(1)"]),  # a scheme: an entry, not prose
        ("mailto:desk@news.example", ["mailto:desk@news.example"]),
        ("news.example/a", ["news.example/a"]),  # no scheme: not guessed
        ("www.news.example", ["www.news.example"]),  # no scheme, but www.
        ("nachrichten.xn--p1ai/a", ["nachrichten.xn--p1ai/a"]),  # a punycode top level
        ("новости.рф/a", ["новости.рф/a"]),  # an IDN host
        ("htp://news.example/a", ["htp://news.example/a"]),  # a typo in the scheme
        ("http//news.example/a", ["http//news.example/a"]),  # the colon lost
        ("//news.example/a", ["//news.example/a"]),  # protocol-relative
        ("http:///path.html", ["http:///path.html"]),  # no host
        ("https://bad_host-.example/", ["https://bad_host-.example/"]),
    ],
)
def test_invalid_entries_are_listed_with_a_reason(raw, invalid):
    parsed = parse_urls(raw)
    assert [entry.text for entry in parsed.invalid] == invalid
    assert all(entry.reason for entry in parsed.invalid)
    assert parsed.valid == ()


def test_a_missing_scheme_says_what_to_add():
    (entry,) = parse_urls("news.example/a").invalid
    assert "https://" in entry.reason


def test_another_scheme_is_not_told_to_add_one():
    for raw in ("mailto:desk@news.example", "javascript:alert(1)"):
        (entry,) = parse_urls(raw).invalid
        assert entry.reason == "The URL must start with http:// or https://."


def test_a_lost_colon_is_not_told_to_add_a_scheme():
    (entry,) = parse_urls("http//news.example/a").invalid
    assert entry.reason == "The URL must start with http:// or https://."


def test_a_label_before_a_link_stays_prose():
    parsed = parse_urls(f"Update: {A}\nRead: {B}")
    assert parsed.valid == (A, B)
    assert parsed.invalid == ()
    assert parsed.words == 2


@pytest.mark.parametrize(
    ("raw", "valid", "words"),
    [
        (f"see {A} and {B}", [A, B], 2),
        (f"Hi Tom, the link: {A} - thanks!", [A], 5),  # "-" is no word
        (f"1. {A}\n2. {B}\n• {A}?utm_source=x", [A, B], 0),  # list markers are layout
        ("figures 3.5 and/or 4.2, i.e. fine, e.g. U.S. figures", [], 7),  # numbers are no words
        ("see README.md, app.py and Node.js", [], 5),  # file names, not hosts
        ("bare news.example and desk@news.example", [], 4),  # no path, no www.: prose
        ("the end.Next sentence", [], 3),  # a missing space
        ("Hinweis: z.B./etwa 24/7 km/h", [], 3),
        ("", [], 0),
    ],
)
def test_words_that_are_not_web_addresses_are_counted_not_invalid(raw, valid, words):
    parsed = parse_urls(raw)
    assert list(parsed.valid) == valid
    assert parsed.invalid == ()
    assert parsed.words == words


def test_a_pasted_mail_full_of_prose_shows_only_its_real_mistakes():
    prose = "Dear desk, as discussed (3.5 vs. 4.2) the figures e.g. for the U.S. are fine. " * 40
    raw = f"{prose}\n{A}\nhtp://news.example/x\n{prose}\nnews.example/page\n{B}\nRegards, Tom"
    parsed = parse_urls(raw)
    assert parsed.valid == (A, B)
    assert [e.text for e in parsed.invalid] == ["htp://news.example/x", "news.example/page"]
    assert parsed.words > 500


@pytest.mark.parametrize(
    ("entries", "valid", "invalid"),
    [
        ([A, "hello", B], [A, B], ["hello"]),  # a program's list has no prose
        ([A, "news.example"], [A], ["news.example"]),  # a bare host: add the scheme
        ([A, "3.5", "-"], [A], ["3.5", "-"]),
        ([f"<{A}>", f"{B}."], [A, B], []),  # wrappers and punctuation as in text
    ],
)
def test_a_listed_word_is_an_invalid_entry(entries, valid, invalid):
    parsed = parse_urls("\n".join(entries), listed=True)
    assert list(parsed.valid) == valid
    assert [e.text for e in parsed.invalid] == invalid
    assert all(e.reason for e in parsed.invalid)
    assert parsed.words == 0


@pytest.mark.parametrize(
    ("entry", "reason"),
    [
        ("hello", "This is not a web address (http or https)."),
        ("news.example", "Add https:// in front: only web addresses can be imported."),
    ],
)
def test_a_listed_word_says_why(entry, reason):
    (found,) = parse_urls(entry, listed=True).invalid
    assert found.reason == reason


@pytest.mark.parametrize(
    ("raw", "valid", "duplicates"),
    [
        (f"{A}\n{A}", [A], [A]),
        (f"{A}\nHTTPS://NEWS.example/a#top", [A], ["HTTPS://NEWS.example/a#top"]),
        (f"{A}?utm_source=x\n{A}", [f"{A}?utm_source=x"], [A]),  # tracking noise
        (f"{B}\n{A}\n{B}\n{A}", [B, A], [B, A]),  # input order kept
        (f"{A}?page=1\n{A}?page=2", [f"{A}?page=1", f"{A}?page=2"], []),  # different URLs
    ],
)
def test_duplicates_by_normalised_url_first_kept(raw, valid, duplicates):
    parsed = parse_urls(raw)
    assert list(parsed.valid) == valid
    assert list(parsed.duplicates) == duplicates


def test_the_counter_counts_each_kind():
    parsed = parse_urls(f"{A}\n{B}\n{A}\nftp://x.example/\nnot-a-url.example/a and more")
    counts = (len(parsed.valid), len(parsed.invalid), len(parsed.duplicates), parsed.words)
    assert counts == (2, 2, 1, 2)
    assert parsed.problem is None


def test_a_list_over_the_maximum_is_refused_with_a_clear_message():
    raw = "\n".join(f"https://news.example/{n}" for n in range(12))
    parsed = parse_urls(raw, max_urls=10)
    assert parsed.too_many
    assert parsed.problem is not None
    assert "10" in parsed.problem
    assert "12" in parsed.problem


def test_the_maximum_is_written_as_the_readers_language_writes_numbers():
    parsed = parse_urls("\n".join(f"https://news.example/{n}" for n in range(5001)))
    with speaking("de"):
        problem = parsed.problem or ""
    # "5,000" reads as five in German: the thousands separator is a dot.
    assert "höchstens 5.000 URLs" in problem
    assert "5.001" in problem


def test_nothing_valid_is_a_problem():
    assert parse_urls("hello there").problem is not None
