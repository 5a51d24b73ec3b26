"""URL normalisation and hashing: the library's dedup key (FR-001), table-driven."""

import hashlib

import pytest

from app.articles.urls import InvalidUrl, normalize_url, url_hash

SAME = [
    # (given, normalised)
    ("http://example.com", "http://example.com/"),
    ("HTTP://EXAMPLE.COM/", "http://example.com/"),
    ("HtTpS://News.Example.ORG/Path/Is/Kept", "https://news.example.org/Path/Is/Kept"),
    ("  https://example.com/a  ", "https://example.com/a"),
    ("http://example.com:80/a", "http://example.com/a"),
    ("https://example.com:443/a", "https://example.com/a"),
    ("http://example.com:443/a", "http://example.com:443/a"),
    ("https://example.com:80/a", "https://example.com:80/a"),
    ("https://example.com:8443/a", "https://example.com:8443/a"),
    ("http://example.com:/a", "http://example.com/a"),
    ("https://example.com/a#section-2", "https://example.com/a"),
    ("https://example.com/a#", "https://example.com/a"),
    ("https://example.com/a?", "https://example.com/a"),
    ("https://example.com/a?#", "https://example.com/a"),
    ("https://example.com?x=1", "https://example.com/?x=1"),
    ("https://example.com/a?b=2&a=1", "https://example.com/a?b=2&a=1"),
    ("https://example.com/a?tag=x&tag=y&tag=x", "https://example.com/a?tag=x&tag=y&tag=x"),
    ("https://example.com/a?flag&x=", "https://example.com/a?flag&x="),
    ("https://example.com/a?x=1&&y=2&", "https://example.com/a?x=1&y=2"),
    (
        "https://example.com/a?utm_source=feed&id=7&utm_medium=rss&utm_campaign=x",
        "https://example.com/a?id=7",
    ),
    ("https://example.com/a?UTM_Source=feed&id=7", "https://example.com/a?id=7"),
    (
        "https://example.com/a?fbclid=1&gclid=2&dclid=3&msclkid=4&mc_eid=5&mc_cid=6&p=1",
        "https://example.com/a?p=1",
    ),
    (
        "https://example.com/a?igshid=1&yclid=2&_ga=3&_gl=4&ref_src=twsrc%5Etfw",
        "https://example.com/a",
    ),
    ("https://example.com/a?ref=home&source=rss", "https://example.com/a?ref=home&source=rss"),
    ("https://example.com/a?q=a+b&r=%2b", "https://example.com/a?q=a+b&r=%2B"),
    ("https://example.com/%7euser/%41bc", "https://example.com/~user/Abc"),
    ("https://example.com/a%2fb%3Fc", "https://example.com/a%2Fb%3Fc"),
    ("https://example.com/100%", "https://example.com/100%"),
    ("https://example.com/a b", "https://example.com/a%20b"),
    ("https://example.com/caf\u00e9?q=\u00fc", "https://example.com/caf%C3%A9?q=%C3%BC"),
    ("https://example.com/a/./b/../c/", "https://example.com/a/c/"),
    ("https://example.com/../../a", "https://example.com/a"),
    ("https://example.com/a/%2E%2E/b", "https://example.com/b"),
    ("https://b\u00fccher.example/buch", "https://xn--bcher-kva.example/buch"),
    ("https://B\u00dcCHER.example/", "https://xn--bcher-kva.example/"),
    ("https://xn--bcher-kva.example/", "https://xn--bcher-kva.example/"),
    ("https://\u4f8b\u3048.\u30c6\u30b9\u30c8/", "https://xn--r8jz45g.xn--zckzah/"),
    ("https://\uff45\uff58\uff41\uff4d\uff50\uff4c\uff45\u3002com/", "https://example.com/"),
    ("https://example.com./a", "https://example.com/a"),
    ("https://my_host.example.com/", "https://my_host.example.com/"),
    ("http://[2001:DB8:0:0:0:0:0:1]/", "http://[2001:db8::1]/"),
    ("http://[2001:db8::1]:80/", "http://[2001:db8::1]/"),
    ("http://[::FFFF:192.0.2.1]:8080/x", "http://[::ffff:c000:201]:8080/x"),
    ("http://192.0.2.1:80/", "http://192.0.2.1/"),
    ("https://user:Secret@Example.com/", "https://user:Secret@example.com/"),
    ("https://@example.com/", "https://example.com/"),
    ("https://example.com/a;params?x=1", "https://example.com/a;params?x=1"),
]


@pytest.mark.parametrize(("given", "expected"), SAME)
def test_normalize_url(given: str, expected: str) -> None:
    assert normalize_url(given) == expected


@pytest.mark.parametrize(("given", "_expected"), SAME)
def test_normalising_twice_changes_nothing(given: str, _expected: str) -> None:
    once = normalize_url(given)
    assert normalize_url(once) == once


INVALID = [
    ("", "empty"),
    ("   ", "empty"),
    ("example.com/a", "http:// or https://"),
    ("//example.com/a", "http:// or https://"),
    ("ftp://example.com/a", "http:// or https://"),
    ("javascript:alert(1)", "http:// or https://"),
    ("mailto:a@example.com", "http:// or https://"),
    ("http://", "no host"),
    ("http:///path", "no host"),
    ("https://?q=1", "no host"),
    ("http://exa mple.com/", "not valid"),
    ("http://a..b/", "not valid"),
    ("http://-a.example/", "not valid"),
    ("http://" + "a" * 64 + ".example/", "not valid"),
    ("http://xn--zz-!.example/", "not valid"),
    ("http://example.com:99999/", "port"),
    ("http://example.com:abc/", "port"),
    ("http://example.com:0/", "port"),
    ("http://[::1/", "malformed"),
    ("http://[not-ipv6]/", "IPv6"),
    ("http://[fe80::1%25eth0]/", "network interface"),
    ("http://example.com/\x00", "control characters"),
    ("http://exam\nple.com/", "control characters"),
    ("https://example.com/" + "a" * 4100, "longer than"),
]


@pytest.mark.parametrize(("given", "reason"), INVALID)
def test_unusable_urls_are_refused_with_a_reason(given: str, reason: str) -> None:
    with pytest.raises(InvalidUrl) as caught:
        normalize_url(given)
    assert reason in str(caught.value)
    assert isinstance(caught.value, ValueError)


DIFFERENT = [
    ("https://example.com/a", "https://example.com/b"),
    ("https://example.com/a", "https://example.com/A"),
    ("http://example.com/a", "https://example.com/a"),
    ("https://example.com/a?x=1&y=2", "https://example.com/a?y=2&x=1"),
    ("https://example.com/a?x=1", "https://example.com/a?x=2"),
    ("https://example.com/a/", "https://example.com/a"),
    ("https://example.com:8080/a", "https://example.com/a"),
]


@pytest.mark.parametrize(("one", "other"), DIFFERENT)
def test_two_different_urls_stay_two_articles(one: str, other: str) -> None:
    assert url_hash(one) != url_hash(other)


def test_url_hash_is_sha256_hex_of_the_normalised_url() -> None:
    url = "HTTPS://Example.com:443/a?utm_source=x#top"
    expected = hashlib.sha256(b"https://example.com/a").hexdigest()
    assert url_hash(url) == expected
    assert len(url_hash(url)) == 64


def test_tracking_noise_hashes_like_the_clean_url() -> None:
    assert url_hash("https://example.com/a?utm_source=x&fbclid=y") == url_hash(
        "https://example.com/a"
    )
