"""The local analyser on realistic text: language, reading time, TF-IDF keywords, summary."""

from __future__ import annotations

import pytest

from app.analysis import language, local, text
from app.analysis.services import Run, run_analysis
from app.analysis.types import AnalysisInput, DocumentFrequencies, Section
from app.articles.processing import article_language
from app.articles.services import process_scraped_article
from app.core import db
from tests.articles.helpers import article_event
from tests.fixtures import as_owner
from tests.plans import per_row_conditions, plan_of

ENGLISH = """Heat pumps outsold gas boilers across Europe for the first time last year, according \
to figures published by the European Heat Pump Association on Monday.

Sales rose by 38 percent in Germany and by more than half in Poland, where subsidies for \
replacing coal stoves were doubled. The association said heat pumps now heat one in six homes \
in the countries it surveyed.

Installers have struggled to keep up. Many of them report waiting lists of several months, and \
the shortage of trained technicians is now the main obstacle to faster growth, the report found.

Manufacturers are expanding their factories. Two of the largest heat pump makers announced new \
plants in Poland and the Czech Republic, which together will employ about four thousand people.

Critics point out that electricity prices remain high compared with gas. Without lower taxes on \
electricity, they argue, heat pumps will stay a choice for households that can afford the \
upfront cost."""

GERMAN = """Der Bundestag hat am Donnerstag das neue Gesetz zur Wärmeplanung beschlossen. Die \
Kommunen müssen damit bis zum Jahr 2028 einen Plan vorlegen, wie ihre Gebäude künftig beheizt \
werden sollen.

Große Städte mit mehr als hunderttausend Einwohnern haben dafür nur bis 2026 Zeit. Die \
Wärmeplanung soll zeigen, wo Fernwärme ausgebaut wird und wo Hausbesitzer auf eine Wärmepumpe \
setzen sollten.

Der Städtetag begrüßte das Gesetz, forderte aber mehr Geld für die Kommunen. Viele Verwaltungen \
hätten nicht genug Personal, um die Wärmeplanung in der vorgegebenen Zeit zu erstellen.

Die Opposition kritisierte, das Gesetz sei zu kompliziert. Eigentümer wüssten noch immer nicht, \
welche Heizung sie in den nächsten Jahren einbauen dürften."""

FRENCH = (
    "Le gouvernement a présenté mercredi un plan pour les transports publics dans les régions. "
    "Il prévoit des trains plus fréquents et une baisse du prix des abonnements pour les jeunes. "
    "Les élus locaux ont salué une mesure attendue depuis longtemps, mais ils demandent des "
    "garanties sur le financement."
)
SPANISH = (
    "El Gobierno aprobó el martes una reforma de las pensiones que eleva las cotizaciones de los "
    "salarios más altos. Los sindicatos han celebrado el acuerdo, pero la patronal ha criticado "
    "que se trata de un aumento de los costes laborales para las empresas."
)
ITALIAN = (
    "Il consiglio comunale ha approvato ieri il nuovo piano per la mobilità della città. Il "
    "piano prevede più piste ciclabili e una zona a traffico limitato nel centro storico, che "
    "sarà attiva anche nei fine settimana."
)
DUTCH = (
    "Het kabinet heeft dinsdag een nieuw plan gepresenteerd voor de bouw van woningen. Er moeten "
    "de komende jaren meer betaalbare huizen komen, maar gemeenten zeggen dat er niet genoeg geld "
    "is om de plannen uit te voeren."
)
PORTUGUESE = (
    "O governo anunciou nesta segunda-feira um novo programa de apoio às pequenas empresas. A "
    "medida prevê crédito com juros mais baixos e foi bem recebida pelas associações do setor, "
    "que pediam ajuda há muito tempo."
)


@pytest.mark.parametrize(
    ("sample", "code"),
    [
        (ENGLISH, "en"),
        (GERMAN, "de"),
        (FRENCH, "fr"),
        (SPANISH, "es"),
        (ITALIAN, "it"),
        (DUTCH, "nl"),
        (PORTUGUESE, "pt"),
    ],
)
def test_the_language_is_detected_from_function_words(sample: str, code: str) -> None:
    assert language.detect(text.words(sample)) == code


def test_too_little_text_says_nothing_and_the_declared_language_is_used() -> None:
    assert language.detect(text.words("Bundestag beschließt")) == ""
    article = AnalysisInput(1, 1, title="", text="Wärmeplanung 2028", language="de-AT")
    assert local.detect_language(article) == "de"


def test_detected_language_wins_over_a_wrong_declaration() -> None:
    article = AnalysisInput(1, 1, title="", text=GERMAN, language="en")
    assert local.detect_language(article) == "de"


def test_an_article_that_quotes_another_language_at_length_keeps_its_own() -> None:
    # An English statement quoted in full at the top of a German report.
    mixed = "\n\n".join([ENGLISH, *[GERMAN] * 6, ENGLISH])
    assert len(text.words(mixed)) < language.SAMPLE_WORDS  # all of it is read
    article = AnalysisInput(1, 1, title="", text=mixed, language="")
    assert local.detect_language(article) == "de"
    assert article_language("en", mixed) == "de"


def test_a_long_text_is_judged_on_its_first_words() -> None:
    # Cheap for 20,000-word articles; the first thousand words say what the rest are.
    german = "\n\n".join([GERMAN] * 12)
    assert len(text.words(german)) > language.SAMPLE_WORDS
    long_text = "\n\n".join([german, *[ENGLISH] * 30])  # mostly English, past the sample
    assert language.detect(text.first_words(long_text, language.SAMPLE_WORDS)) == "de"
    assert article_language("", long_text) == "de"


@pytest.mark.parametrize("limit", [0, 1, 5, 60, 10_000])
@pytest.mark.parametrize(
    "sample", [ENGLISH, GERMAN, FRENCH, "日本語のテキスト Tōkyō İstanbul’s ½ naïve"]
)
def test_first_words_are_the_words_up_to_the_limit(sample: str, limit: int) -> None:
    assert text.first_words(sample, limit) == text.words(sample)[:limit]


@pytest.mark.parametrize(
    ("words", "minutes"), [(0, 1), (1, 1), (230, 1), (231, 2), (460, 2), (2300, 10)]
)
def test_reading_time_is_words_at_230_a_minute_at_least_one(words: int, minutes: int) -> None:
    assert text.reading_minutes(" ".join(["word"] * words)) == minutes


def test_sentences_keep_abbreviations_and_paragraphs_together() -> None:
    found = text.sentences(
        "Dr. Smith met Prof. Jones in the U.S. on Monday. They talked.\n\nA new paragraph! "
        "Der Plan, z. B. für Berlin, gilt ab 2026. Ende."
    )
    assert found == [
        "Dr. Smith met Prof. Jones in the U.S. on Monday.",
        "They talked.",
        "A new paragraph!",
        "Der Plan, z. B. für Berlin, gilt ab 2026.",
        "Ende.",
    ]


def _analyse(body: str, title: str, frequencies: DocumentFrequencies):
    article = AnalysisInput(1, 1, title=title, text=body)
    terms = local.count_terms(article)
    return local.analyse(article, terms, frequencies)


def test_english_article_gets_keywords_a_three_sentence_summary_and_reading_time() -> None:
    result = _analyse(ENGLISH, "Heat pumps outsell gas boilers", DocumentFrequencies(total=1))

    assert result.language == "en"
    assert result.reading_minutes == 1
    assert result.analyser == "local-v1"
    assert result.keywords[:4] == ("heat", "pumps", "gas", "boilers")
    assert not {"now", "the", "said", "one"} & {k.lower() for k in result.keywords}
    sentences = text.sentences(result.summary)
    assert len(sentences) == 3
    # Extractive, in the article's own order.
    positions = [ENGLISH.replace("\n", " ").index(s[:40]) for s in sentences]
    assert positions == sorted(positions)


def test_german_article_keeps_the_written_form_of_its_keywords() -> None:
    result = _analyse(GERMAN, "Bundestag beschließt Wärmeplanung", DocumentFrequencies(total=1))

    assert result.language == "de"
    assert result.keywords[0] == "Wärmeplanung"
    assert "Gesetz" in result.keywords
    assert "Kommunen" in result.keywords
    assert len(text.sentences(result.summary)) == 3
    assert all(s in GERMAN.replace("\n", " ") for s in text.sentences(result.summary))


FUNCTION_WORDS = {"until", "again", "near", "bis", "alle", "hier", "agli", "sugli", "altri", "loro"}


@pytest.mark.parametrize(
    "body",
    [
        "The council closed the bridge until the spring. Cars must wait until the repairs end. "
        "Buses run until midnight near the bridge. Again the bridge closed, again drivers waited.",
        "Die Brücke bleibt bis Freitag gesperrt. Alle Busse fahren bis Mitternacht. Hier warten "
        "alle Pendler bis zum Abend, hier staut sich alles.",
        "Il consiglio ha chiesto agli abitanti di contare gli uccelli sugli alberi. Altri "
        "volontari contano gli uccelli sugli alberi. Loro contano ogni anno, altri agli incroci.",
    ],
)
def test_function_words_are_no_keywords(body: str) -> None:
    result = _analyse(body, "", DocumentFrequencies(total=1))

    assert result.keywords
    assert not FUNCTION_WORDS & {k.lower() for k in result.keywords}


def test_unspaced_scripts_give_no_sentences_for_keywords() -> None:
    body = "仙台で猛暑日が続いています。市は図書館や公民館など十か所に涼める場所を開設しました。"
    assert _analyse(body, "仙台で猛暑日", DocumentFrequencies(total=1)).keywords == ()


def test_keywords_are_weighted_against_the_workspace() -> None:
    article = AnalysisInput(1, 1, title="", text=ENGLISH)
    terms = local.count_terms(article)
    everywhere = DocumentFrequencies(total=100, counts={"heat": 100, "pumps": 100})
    rare = DocumentFrequencies(total=100, counts={"heat": 1, "pumps": 1})

    assert local.keywords(terms, local.weights(terms, rare))[:2] == ("heat", "pumps")
    common = local.keywords(terms, local.weights(terms, everywhere))
    assert common.index("heat") > common.index("Poland")


def test_the_same_input_gives_the_same_result() -> None:
    frequencies = DocumentFrequencies(total=3, counts={"heat": 2})
    assert _analyse(ENGLISH, "t", frequencies) == _analyse(ENGLISH, "t", frequencies)


def test_sections_the_body_already_contains_are_not_counted_twice() -> None:
    article = AnalysisInput(
        1,
        1,
        title="",
        text="Abstract text here.\n\nMethod: we do things.",
        sections=(Section("Method", "Method: we do things."), Section("Results", "It works.")),
    )
    assert (
        article.full_text == "Abstract text here.\n\nMethod: we do things.\n\nResults\n\nIt works."
    )


async def test_document_frequencies_come_from_the_workspace_articles(services, people, settings):
    workspace, _owner = await people.workspace()
    other, _ = await people.workspace("Other")
    for i in range(4):
        body = ENGLISH if i == 0 else f"Story {i} about heat in summer and the council budget."
        await process_scraped_article(workspace, article_event(text=body))
    await process_scraped_article(other, article_event(text="heat heat pumps pumps"))

    from app.analysis.queries import document_frequencies

    frequencies = await document_frequencies(workspace, ["heat", "pumps", "absent"])

    assert frequencies.total == 4
    assert frequencies.counts == {"heat": 4, "pumps": 1, "absent": 0}


async def test_document_frequencies_parse_each_term_once_per_language_not_per_article(
    services, people
):
    # Parsing the term again for every article it might be in made an analysis take seconds.
    workspace, _owner = await people.workspace()
    for i in range(20):
        await process_scraped_article(workspace, article_event(text=f"Heat story {i}. {ENGLISH}"))
    german = (
        "Die Stadt baut neue Häuser für Familien, und der Rat hat den Plan im Sommer gebilligt."
    )
    await process_scraped_article(workspace, article_event(text=german, language="de"))

    from app.analysis.queries import document_frequencies

    terms = ["heat", "haus", "absent"]  # "haus": the German article's "Häuser"
    plan = await plan_of(
        workspace, lambda: document_frequencies(workspace, terms), "websearch_to_tsquery"
    )

    assert not [c for c in per_row_conditions(plan) if "tsquery" in c]
    frequencies = await document_frequencies(workspace, terms)
    assert (frequencies.total, frequencies.counts) == (21, {"heat": 20, "haus": 1, "absent": 0})


async def test_document_frequencies_of_a_large_library_come_from_its_latest_articles(
    services, people
):
    # Counting in every article made each analysis slower with every article saved.
    workspace, _owner = await people.workspace()
    texts = ["Heat in the old town."] + ["The council met."] * 3  # the oldest four
    texts += ["Heat and rain.", "The budget.", "Heat again.", "The bridge."]  # the latest four
    for body in texts:
        await process_scraped_article(workspace, article_event(text=body))

    from app.analysis.queries import document_frequencies

    frequencies = await document_frequencies(workspace, ["heat", "absent"], sample=4)

    # 2 of the latest 4 hold "heat": half of the library's 8, by that measure.
    assert (frequencies.total, frequencies.counts) == (8, {"heat": 4, "absent": 0})
    exact = await document_frequencies(workspace, ["heat"], sample=8)
    assert exact.counts == {"heat": 3}


def _subplan(plan: dict, name: str) -> dict | None:
    """The part of the plan that makes the CTE or init plan `name`."""
    if plan.get("Subplan Name") == name:
        return plan
    for child in plan.get("Plans", []):
        if (found := _subplan(child, name)) is not None:
            return found
    return None


def _scans(plan: dict, table: str) -> list[str]:
    """How each scan in the plan reads `table` (Seq Scan, Index Scan, Index Only Scan, ...)."""
    found = [plan["Node Type"]] if plan.get("Relation Name") == table else []
    for child in plan.get("Plans", []):
        found += _scans(child, table)
    return found


async def test_document_frequencies_count_the_library_from_an_index_not_its_rows(services, people):
    # Counting the live articles of each language read every article's row (~5 us each,
    # 260 ms at 50,000): the one part of the term counts that grew with the library.
    workspace, _owner = await people.workspace()
    for i in range(12):
        language = "de" if i % 3 == 0 else "en"
        await process_scraped_article(
            workspace, article_event(text=f"Heat {i}.", language=language)
        )

    from app.analysis.queries import document_frequencies

    # As autovacuum keeps a library's pages marked all-visible (what an index-only read needs
    # not to visit the table), planned as for a large library.
    await as_owner("VACUUM articles")
    async with db.workspace_tx(workspace) as tx:
        for plan_kind in ("seqscan", "bitmapscan"):
            await tx.execute(f"SET LOCAL enable_{plan_kind} = off")
        plan = await plan_of(
            workspace,
            lambda: document_frequencies(workspace, ["heat"], sample=3),
            "websearch_to_tsquery",
            analyze=True,
        )

    counted = _subplan(plan, "CTE configs")
    assert counted is not None
    assert _scans(counted, "articles") == ["Index Only Scan"]
    frequencies = await document_frequencies(workspace, ["heat"], sample=3)
    assert (frequencies.total, frequencies.counts) == (12, {"heat": 12})


async def test_a_stored_article_is_analysed_end_to_end(services, people, settings):
    workspace, _owner = await people.workspace()
    for i in range(3):
        await process_scraped_article(
            workspace, article_event(text=f"Heat waves hit the city again. Report {i}.")
        )
    outcome = await process_scraped_article(
        workspace, article_event(text=ENGLISH, title="Heat pumps outsell gas boilers")
    )

    assert await run_analysis(workspace, outcome.article_id, settings) == Run.COMPLETED

    row = await db.fetchrow("SELECT * FROM analyses WHERE article_id = $1", outcome.article_id)
    assert row["status"] == "completed"
    assert row["analyser"] == "local-v1"
    assert row["language"] == "en"
    assert row["reading_minutes"] == 1
    assert row["completed_at"] is not None
    assert row["lease_until"] is None
    # "heat" is in every article of the workspace, "pumps" only in this one.
    import json

    keywords = [k.lower() for k in json.loads(row["keywords"])]
    assert keywords.index("pumps") < keywords.index("heat")
