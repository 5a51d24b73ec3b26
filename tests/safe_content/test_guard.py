"""The pre-pass that bounds html5ever's work on markup-heavy input."""

from __future__ import annotations

import re
import time

import pytest

from app.safe_content import guard
from app.safe_content.guard import GUARD_MAX_DEPTH, defuse, needs_guard


def _tags(html: str) -> list[str]:
    return re.findall(r"</?([a-z0-9]+)", html)


def test_needs_guard_counts_markup_starts() -> None:
    assert not needs_guard("<p>x</p>" * 10)
    assert needs_guard("<p>x</p>" * guard.GUARD_TAG_THRESHOLD)
    assert not needs_guard("a < b and 3<4 " * 10_000)  # "<" before a digit or space is text


def test_only_kept_tags_and_attributes_are_written() -> None:
    out = defuse(
        '<div id=x style="a" onclick=y><p class=c>Hi <a href="https://a.example/?a=1&amp;b=2" '
        "onmouseover=z class='mention u-url' data-init=q>@bob</a><font color=red>f</font>"
        '<img src=x alt="a>b" onerror=1></p></div>'
    )
    assert out == (
        '<div><p>Hi <a href="https://a.example/?a=1&amp;b=2" class="mention u-url">@bob</a>f'
        '<img src="x" alt="a>b"></p></div>'
    )


def test_formatting_elements_lose_their_attributes() -> None:
    # Distinct attributes are what defeat html5ever's "Noah's Ark" bound.
    assert defuse('<b a="1"><i a="2"><strong x>t</strong></i></b>') == (
        "<b><i><strong>t</strong></i></b>"
    )


def test_raw_text_and_dropped_subtrees() -> None:
    out = defuse(
        "a<script>if (a<b) document.write('<p>')</script>b<style>p{}</style>"
        "<svg><p>in svg</p><svg></svg>still</svg>c<textarea><b>t</b></textarea>d"
        "<template><p>tpl</p></template>e"
    )
    assert out == "abcde"


def test_comments_doctype_and_bogus_markup_vanish() -> None:
    assert defuse("<!DOCTYPE html>a<!-- <p>x</p> -->b<!-->c<?pi x?>d</ x>e<![CDATA[f]]>g") == (
        "abcdeg"
    )


def test_stray_lt_is_escaped_and_nul_dropped() -> None:
    assert defuse("1 < 2 <3 \x00x") == "1 &lt; 2 &lt;3 x"


def test_quotes_in_attribute_values_are_re_escaped() -> None:
    assert defuse("<a href='https://a.example/\"x'>l</a>") == (
        '<a href="https://a.example/&quot;x">l</a>'
    )


def test_output_is_well_nested_and_closed() -> None:
    out = defuse("<div><p><b>x</div>y</p><ul><li>z")
    assert out == "<div><p><b>x</b></p></div>y<ul><li>z</li></ul>"


def test_depth_is_capped_and_skipped_end_tags_do_not_close_outer_ones() -> None:
    out = defuse("<div>" * 100 + "x" + "</div>" * 100 + "after")
    assert _tags(out).count("div") == 2 * GUARD_MAX_DEPTH
    assert out.endswith("x" + "</div>" * GUARD_MAX_DEPTH + "after")


@pytest.mark.parametrize(
    "html",
    [
        "<a " * 50_000,
        "<!--" + "<x>" * 50_000,
        '<div a="' * 50_000,
        "<div " + "a=b " * 100_000 + ">",
        "</" * 100_000,
        "<![CDATA[" * 50_000,
    ],
)
def test_unterminated_constructs_are_linear(html: str) -> None:
    # CPU time, not wall time: other processes on a loaded machine must not fail it.
    started = time.process_time()
    defuse(html)
    assert time.process_time() - started < 1.0
