"""The Jinja filters templates use for every third-party field."""

from __future__ import annotations

import json
import logging

import jinja2
import pytest

from app.safe_content import Document, Paragraph, Text, from_html, register_filters, to_json
from tests.safe_content.checks import fake_media_url, problems_in


@pytest.fixture
def env() -> jinja2.Environment:
    environment = jinja2.Environment(autoescape=True)
    register_filters(environment, media_url=fake_media_url)
    return environment


def _render(env: jinja2.Environment, source: str, **values: object) -> str:
    return env.from_string(source).render(**values)


def test_rich_accepts_a_document_json_or_dict(env: jinja2.Environment) -> None:
    doc = from_html('<p>Hi <img src="https://i.example/a.png" alt="a"></p>')
    expected = _render(env, "{{ body | rich }}", body=doc)
    assert expected.startswith('<div class="rich" data-ignore><p>Hi <img src="/media/sig/')
    assert _render(env, "{{ body | rich }}", body=to_json(doc)) == expected
    assert _render(env, "{{ body | rich }}", body=to_json(doc).decode()) == expected
    assert _render(env, "{{ body | rich }}", body=json.loads(to_json(doc))) == expected


def test_rich_on_invalid_stored_content_shows_a_notice_and_logs(
    env: jinja2.Environment, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING):
        out = _render(
            env, "{{ body | rich }}", body='{"type":"document","children":[{"type":"script"}]}'
        )
    assert (
        out == '<div class="rich" data-ignore><p>[This content could not be displayed.]</p></div>'
    )
    assert "unrenderable rich text" in caplog.text


def test_rich_inline(env: jinja2.Environment) -> None:
    doc = Document((Paragraph((Text("<Title>"),)),))
    assert _render(env, "{{ t | rich_inline }}", t=doc) == "<span data-ignore>&lt;Title&gt;</span>"


def test_third_party_escapes_plain_strings(env: jinja2.Environment) -> None:
    out = _render(env, "{{ name | third_party }}", name='<img src=x onerror="alert(1)">')
    assert out == "<span data-ignore>&lt;img src=x onerror=&#34;alert(1)&#34;&gt;</span>"
    assert problems_in(out) == []
    assert _render(env, "{{ name | third_party }}", name=None) == "<span data-ignore></span>"


def test_none_renders_empty(env: jinja2.Environment) -> None:
    assert _render(env, "{{ body | rich }}", body=None) == '<div class="rich" data-ignore></div>'


def test_filters_work_without_a_media_proxy() -> None:
    environment = jinja2.Environment(autoescape=True)
    register_filters(environment)
    doc = from_html('<p><img src="https://i.example/a.png" alt="alt text"></p>')
    out = environment.from_string("{{ d | rich }}").render(d=doc)
    assert out == '<div class="rich" data-ignore><p>alt text</p></div>'
