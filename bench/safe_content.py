"""Throughput of the safe-content pipeline against bare nh3.clean.

    .venv/bin/python bench/safe_content.py [seconds-per-measurement]

For a Mastodon-status-sized input and a 50 KB article body it prints items/s
for (a) from_html + render_html (our full path: guard, nh3, parse, AST,
render) and (b) bare `nh3.clean` with its defaults on the same input, and
the ratio (how many times slower the full path is).
"""

from __future__ import annotations

import random
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import nh3  # noqa: TID251 -- the baseline being compared against

from app.safe_content import from_html, render_html

STATUS = (
    '<p>Morning <span class="h-card" translate="no"><a href="https://mastodon.social/@alice" '
    'class="u-url mention">@<span>alice</span></a></span>! Council minutes are out, all 40 pages:</p>'
    '<p><a href="https://city.example.org/council/minutes/2024-05-14-full.pdf" target="_blank" '
    'rel="nofollow noopener noreferrer" translate="no"><span class="invisible">https://</span>'
    '<span class="ellipsis">city.example.org/council/minutes</span><span class="invisible">'
    '/2024-05-14-full.pdf</span></a> <a href="https://mastodon.social/tags/OpenData" '
    'class="mention hashtag" rel="tag">#<span>OpenData</span></a></p>'
)

_TEXT = (
    "the council said on tuesday that its budget for housing would rise while critics argued "
    "the plan left renters exposed to higher costs and fewer protections across the region "
    "according to documents seen by reporters and interviews with residents officials"
)
_WORDS = _TEXT.split(" ")


def _sentence(rng: random.Random) -> str:
    words = [rng.choice(_WORDS) for _ in range(rng.randint(8, 22))]
    return " ".join(words).capitalize() + "."


def _paragraph(rng: random.Random) -> str:
    parts = []
    for _ in range(rng.randint(3, 6)):
        sentence = _sentence(rng)
        roll = rng.random()
        if roll < 0.25:
            n = rng.randint(1, 999)
            sentence += f' See <a href="https://news.example.org/2024/story-{n}">the report</a>.'
        elif roll < 0.4:
            sentence = f"<strong>{sentence}</strong>"
        elif roll < 0.5:
            sentence = f"<em>{sentence}</em>"
        parts.append(sentence)
    return "<p>" + " ".join(parts) + "</p>\n"


def make_article(size: int = 50_000, seed: int = 7) -> str:
    """Article HTML like trafilatura's output: headings, paragraphs, lists, links, images."""
    rng = random.Random(seed)
    out = ["<html><body><div>"]
    length = 0
    section = 0
    while length < size:
        roll = rng.random()
        if roll < 0.08:
            section += 1
            chunk = f"<h2>Section {section}: {_sentence(rng)[:-1]}</h2>\n"
        elif roll < 0.14:
            items = "".join(f"<li>{_sentence(rng)}</li>" for _ in range(rng.randint(3, 6)))
            chunk = f"<ul>{items}</ul>\n"
        elif roll < 0.18:
            n = rng.randint(1, 99)
            chunk = (
                f'<figure><img src="https://cdn.news.example.org/img/{n}.jpg" alt="Photo {n}">'
                f"<figcaption>{_sentence(rng)}</figcaption></figure>\n"
            )
        elif roll < 0.21:
            chunk = f"<blockquote><p>{_sentence(rng)}</p></blockquote>\n"
        else:
            chunk = _paragraph(rng)
        out.append(chunk)
        length += len(chunk)
    out.append("</div></body></html>")
    return "".join(out)


def measure(func: Callable[[], object], seconds: float) -> float:
    """Calls per second, calling `func` in growing batches for about `seconds`."""
    func()  # warm caches (regexes, the URL cache, the nh3 cleaner)
    calls, batch = 0, 1
    started = time.perf_counter()
    while (elapsed := time.perf_counter() - started) < seconds:
        for _ in range(batch):
            func()
        calls += batch
        batch = min(batch * 2, 10_000)
    return calls / elapsed


def main() -> None:
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 2.5
    inputs = {"mastodon status": STATUS, "50 KB article": make_article()}
    print(f"{'input':<16} {'bytes':>7} {'from_html+render/s':>19} {'nh3.clean/s':>12} {'ratio':>7}")
    for name, html in inputs.items():
        ours = measure(lambda html=html: render_html(from_html(html)), seconds)
        bare = measure(lambda html=html: nh3.clean(html), seconds)
        size = len(html.encode())
        print(f"{name:<16} {size:>7} {ours:>19,.0f} {bare:>12,.0f} {bare / ours:>6.1f}x")


if __name__ == "__main__":
    main()
