"""An OpenAI-compatible chat-completions endpoint as analyser (ANALYSIS_ENDPOINT).

The article goes out through egress in one JSON-mode request; the answer must
be one JSON object with "summary", "keywords" and "language". Anything else -
an unreachable endpoint, a status other than 2xx, a body that is not that
object - is an `AnalysisFailed` with a reason a person can read, which the
service records and retries with backoff. Reading time is always computed
here, never asked for.
"""

from __future__ import annotations

import json
from typing import Any

from app.analysis import language as lang
from app.analysis import text as txt
from app.analysis.types import AnalysisFailed, AnalysisInput, AnalysisResult
from app.core.config import Settings
from app.core.i18n import _
from app.egress import EgressError, RateLimited, egress
from app.safe_content.textutil import clean_text

MAX_INPUT_CHARS = 12_000  # of article text sent; enough for a summary, bounded cost
MAX_ANSWER_BYTES = 1_000_000
TIMEOUT_SECONDS = 120.0
MAX_KEYWORDS = 8
MAX_KEYWORD_CHARS = 60
MAX_SUMMARY_CHARS = 1200
# The endpoint's calls spend a budget of their own, not its host's: a host that also
# serves feeds must not have its scrapers starved by long analysis calls.
BUDGET_KEY = "analysis-endpoint"

SYSTEM_PROMPT = (
    "You analyse news articles and research papers. Answer with one JSON object and "
    'nothing else, with exactly these keys: "summary" (at most three sentences, in the '
    'language of the article), "keywords" (an array of at most eight short keywords, '
    'most relevant first) and "language" (the ISO 639-1 code of the article\'s language).'
)


def completions_url(endpoint: str) -> str:
    base = endpoint.rstrip("/")
    return base if base.endswith("/chat/completions") else f"{base}/chat/completions"


class RemoteAnalyser:
    def __init__(self, settings: Settings) -> None:
        self.url = completions_url(settings.analysis_endpoint)
        self.model = settings.analysis_model
        self.api_key = settings.analysis_api_key.get_secret_value()
        self.name = f"openai:{self.model}"[:80]

    def request_body(self, article: AnalysisInput) -> dict[str, Any]:
        text = article.full_text[:MAX_INPUT_CHARS]
        return {
            "model": self.model,
            "temperature": 0,
            "response_format": {"type": "json_object"},
            "messages": [
                {"role": "system", "content": SYSTEM_PROMPT},
                {"role": "user", "content": f"Title: {article.title}\n\n{text}"},
            ],
        }

    async def analyse(self, article: AnalysisInput) -> AnalysisResult:
        headers = {"Accept": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        try:
            answer = await egress().fetch(
                self.url,
                method="POST",
                json=self.request_body(article),
                headers=headers,
                max_bytes=MAX_ANSWER_BYTES,
                total_timeout=TIMEOUT_SECONDS,
                budget_key=BUDGET_KEY,
            )
        except RateLimited as error:
            raise AnalysisFailed(
                _("The analysis endpoint asked us to wait: %(why)s") % {"why": error.message},
                retry_after=error.retry_after,
            ) from None
        except EgressError as error:
            raise AnalysisFailed(
                _("The analysis endpoint failed: %(why)s") % {"why": error.message}
            ) from None
        fields = parse_answer(answer.content)
        full_text = article.full_text
        return AnalysisResult(
            summary=fields["summary"],
            keywords=fields["keywords"],
            language=fields["language"] or lang.declared(article.language),
            reading_minutes=txt.reading_minutes(full_text),
            analyser=self.name,
        )


def parse_answer(body: bytes) -> dict[str, Any]:
    """The summary, keywords and language of a chat-completions answer, checked."""
    try:
        content = json.loads(body)["choices"][0]["message"]["content"]
        fields = json.loads(_unfenced(content))
    except (ValueError, KeyError, IndexError, TypeError):
        raise AnalysisFailed(
            _("The analysis endpoint did not answer with a chat completion holding a JSON object.")
        ) from None
    if not isinstance(fields, dict) or not isinstance(fields.get("summary"), str):
        raise AnalysisFailed(_("The analysis endpoint's answer has no summary."))
    raw_keywords = fields.get("keywords", [])
    if not isinstance(raw_keywords, list):
        raise AnalysisFailed(_("The analysis endpoint's keywords are not a list."))
    keywords = tuple(
        keyword
        for keyword in (_plain(k, MAX_KEYWORD_CHARS) for k in raw_keywords if isinstance(k, str))
        if keyword
    )[:MAX_KEYWORDS]
    raw_language = fields.get("language", "")
    return {
        "summary": _plain(fields["summary"], MAX_SUMMARY_CHARS),
        "keywords": keywords,
        "language": lang.declared(_plain(raw_language, 35))
        if isinstance(raw_language, str)
        else "",
    }


def _plain(text: str, limit: int) -> str:
    """One line of text PostgreSQL will store: no NUL, controls or lone surrogates
    (JSON may carry "\\u0000" and "\\ud800"), whitespace collapsed, capped."""
    return " ".join(clean_text(text).split())[:limit]


def _unfenced(content: str) -> str:
    """Some compatible servers wrap JSON mode answers in a ``` fence anyway."""
    stripped = content.strip()
    if stripped.startswith("```"):
        stripped = stripped.split("\n", 1)[1] if "\n" in stripped else ""
        stripped = stripped.rsplit("```", 1)[0]
    return stripped
