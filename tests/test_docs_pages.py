"""How the gate reads a product's documentation (fresh-user review, session 66): a page
for a deprecated version beside the current one, and a changelog's "from X to Y"."""

from __future__ import annotations

import numpy as np
import pytest
from fakes import over_sentences

from camab_rag.citations import CitedAnswer, cite
from camab_rag.groundedness.anchors import context_words
from camab_rag.groundedness.score import coverage
from camab_rag.groundedness.wordforms import ContextWords, is_stale, misread_spans, rivals
from camab_rag.result import AttributionResult
from camab_rag.segments import Segment, segment_documents, to_documents

DOCS = [
    "Quillstore configuration reference. `port` sets the TCP port the server listens on; "
    "the default is 7400. `max_connections` limits concurrent client connections; the "
    "default is 256.",
    "Changelog. Version 3.1 (October 2024): added zstd compression and raised the default "
    "max_connections from 128 to 256.",
    "Deprecated: this page describes Quillstore 2.x. In Quillstore 2.x the server listened on "
    "port 6400 by default and allowed at most 64 connections.",
]


@pytest.mark.parametrize(
    ("text", "stale"),
    [
        ("Deprecated: this page describes Quillstore 2.x.", True),
        ("DEPRECATED - Quillstore 2.x docs.", True),
        ("Setup. This page is deprecated; see the new guide.", True),
        ("CLI reference. The --file flag is deprecated; use --output.", False),
        # the second review's banner (session 66), and pages that only mention the old
        ("Legacy documentation: this page describes API v1, which is deprecated.", True),
        ("This reference describes the v1 API, which is no longer maintained.", True),
        ("Migrating from v1 to v2. The legacy apikey parameter was removed.", False),
        ("Setup. This guide also covers the legacy installer.", False),
        ("This guide also covers the legacy installer.", False),
    ],
)
def test_a_deprecated_banner_marks_the_page_not_a_deprecated_flag(text, stale):
    assert is_stale(text) is stale


def test_a_deprecated_versions_value_is_disputed_and_the_current_one_not_misread():
    context = ContextWords.of(DOCS, "What port does Quillstore use by default?")
    assert [d for _, d in rivals("Quillstore listens on port 6400 by default.", context)] == [{0}]
    right = "Quillstore listens on port 7400 by default."
    assert rivals(right, context) == []
    # the deprecated page's clause is the closest to its words: history, not a misreading
    assert misread_spans(right, context) == []


def test_a_changelogs_former_value_is_disputed_by_the_change():
    context = ContextWords.of(DOCS[1:], "What is the default max_connections?")
    assert [d for _, d in rivals("The default max_connections is 128.", context)] == [{0}]
    assert rivals("The default max_connections is 256.", context) == []


def test_an_answer_stating_the_change_itself_is_not_disputed():
    context = ContextWords.of(
        ["The jobless rate fell from 7 percent to 5 percent last year."], "What happened?"
    )
    assert rivals("The jobless rate fell from 7 percent to 5 percent.", context) == []
    assert [d for _, d in rivals("The jobless rate was 7 percent.", context)] == [{0}]


def test_a_banner_marks_every_segment_of_its_page_when_the_gate_reads_segments():
    docs = [
        "Configuration reference. Options are set in quillstore.toml. `port` sets the TCP "
        "port the server listens on; the default is 7400.",
        "Deprecated: this page describes Quillstore 2.x. In Quillstore 2.x the server "
        "listened on port 6400 by default and allowed at most 64 connections.",
    ]
    segments = segment_documents(to_documents(docs), "sentence")
    right = "Quillstore listens on port 7400 by default."
    result = AttributionResult(
        scores=np.zeros(len(segments)),
        segments=segments,
        question="What port does Quillstore use by default?",
        response=right,
        n_documents=2,
        n_queries=4,
    )
    read = context_words(result=result)  # no context given: the attribution's segments
    assert read.stale == {3, 4}  # the banner and the 2.x clause
    assert misread_spans(right, read) == []
    alone = ContextWords.of([s.text for s in segments], result.question)
    assert alone.stale == {3}  # read alone, the 2.x clause was current: "7400" misread
    assert misread_spans(right, alone) == [(27, 31)]


def test_a_setting_off_by_default_denies_a_yes_to_enabled():
    page = "`compression` enables zstd compression of values and is off by default."
    context = ContextWords.of([page], "Is compression enabled by default?")
    assert misread_spans("Yes.", context) == [(0, 3)]
    assert misread_spans("No.", context) == []
    assert misread_spans("Yes, compression is enabled by default.", context) == [(20, 27), (0, 3)]
    assert misread_spans("No, compression is disabled by default.", context) == []


def test_seconds_read_as_minutes():
    page = "`snapshot_interval` sets how often data is written to disk; the default is 300 seconds."
    context = ContextWords.of([page], "How often are snapshots written?")
    assert {"5", "min"} <= context.forms  # "which is five minutes" is held
    assert misread_spans("Every 300 seconds, which is five minutes.", context) == []
    assert coverage("Every 300 seconds, which is five minutes.", context) == 1.0
    hourly = ContextWords.of(["Snapshots are written every 120 minutes."], "How often?")
    assert coverage("Snapshots are written every 2 hours.", hourly) == 1.0


CLI = [
    "CLI reference. `qsctl backup --output PATH` writes a consistent backup to PATH.",
    "Deprecated: this page describes Quillstore 2.x. Backups were made with "
    "`qsctl dump --file PATH`.",
]


def test_a_word_only_a_deprecated_page_holds_is_rivalled_by_the_current_page():
    context = ContextWords.of(CLI, "How do I make a backup?")
    dump = "Run `qsctl dump --file PATH`."
    assert rivals(dump, context) == [((11, 15), {0}), ((16, 22), {0})]  # "dump", "--file"
    assert rivals("Run `qsctl backup --file PATH`.", context) == [((18, 24), {0})]
    assert rivals("Run `qsctl backup --output PATH`.", context) == []
    # no page marks itself out of date: two current pages, no rival by this rule
    current = ContextWords.of([CLI[0], CLI[1].replace("Deprecated: this", "This")], "?")
    assert rivals(dump, current) == []


def test_an_answer_about_the_time_before_the_change_takes_the_former_value():
    context = ContextWords.of(DOCS[1:2], "Was max_connections 256 in 3.0 too?")
    assert rivals("No, before 3.1 the default max_connections was 128.", context) == []
    assert rivals("No, it used to be 128.", context) == []
    assert [d for _, d in rivals("No, the default max_connections is 128.", context)] == [{0}]


def _cited(docs: list[str], question: str, answer: str, strong: str) -> CitedAnswer:
    """``answer`` cited over the sentences of ``docs``, the model's support on the one
    holding ``strong``."""

    def scores(segments: list[Segment]) -> np.ndarray:
        return np.array([0.9 * (strong in s.text) for s in segments])

    return cite(over_sentences(docs, question, answer, scores), docs)


def test_a_cited_out_of_date_page_says_so_in_every_renderer():
    # the second review: a legacy page cited as "support" for its own old value, unmarked
    docs = [
        "Forecast endpoint (v2). The hours parameter defaults to 48.",
        "Legacy documentation: this page describes API v1, which is deprecated. The hours "
        "parameter defaults to 24.",
    ]
    asked = "What does the hours parameter default to?"
    cited = _cited(docs, asked, "The hours parameter defaults to 24.", "defaults to 24")
    assert [(s.doc_index, s.stale) for s in cited.sources] == [(1, True), (0, False)]
    assert cited.to_dict()["sources"][0]["stale"] is True
    for shown in (cited.to_terminal(color=False), cited.to_markdown(), cited.to_html()):
        assert shown.count("an out-of-date page") == 1, shown


API = [
    "Forecast endpoint (v2). Temperatures are in Celsius unless you set units=imperial.",
    "Migrating from v1 to v2. The units_system parameter was renamed to units. The API key "
    "now goes in the X-Skyline-Key header instead of the apikey query parameter.",
]


@pytest.mark.parametrize(
    ("question", "answer", "rivalled"),
    [
        ("How do I get Fahrenheit?", "Set units_system=imperial.", ["units_system"]),
        ("How do I get Fahrenheit?", "Set units=imperial.", []),
        ("How do I send my API key?", "Pass it in the apikey query parameter.", ["apikey"]),
        ("How do I send my API key?", "Put it in the X-Skyline-Key header.", []),
        # the time before the change, or the change itself: what the guide says
        ("How did v1 take the key?", "Before v2, it went in the apikey query parameter.", []),
        ("What changed?", "The key goes in a header instead of the apikey parameter.", []),
    ],
)
def test_a_renamed_or_replaced_word_is_rivalled_by_the_current_page(question, answer, rivalled):
    context = ContextWords.of(API, question)
    assert [answer[a:b] for (a, b), _ in rivals(answer, context)] == rivalled


def test_the_page_rivalling_a_renamed_word_shows_its_passage():
    docs = [
        *API,
        "Legacy documentation: this page describes API v1, which is deprecated. Set "
        "units_system=imperial to get Fahrenheit.",
    ]
    cited = _cited(docs, "How do I get Fahrenheit?", "Set units_system=imperial.", "units_system=")
    assert [(s.doc_index, s.disputes) for s in cited.sources] == [(2, []), (0, ["units_system"])]
    # where it says otherwise, not the whole page cut short
    assert [p.text for p in cited.sources[1].disputing] == [
        "Temperatures are in Celsius unless you set units=imperial."
    ]


def test_minutes_are_not_read_down_into_seconds():
    # a blind set's "20-minute navigation task" stated 1200 seconds, so an invented
    # "SEK 1,200" resit fee was held; and "one-hour session" stated 60 minutes, so an
    # invented "ninety-minute session" was a misreading, not a fact never stated
    context = ContextWords.of(["It includes a 20-minute task. A one-hour session costs 120."])
    assert "1200" not in context.forms
    assert "60" not in context.forms
    hourly = ContextWords.of(["A 60-minute lesson costs 40 pounds."])
    assert coverage("A one-hour lesson costs 40 pounds.", hourly) == 1.0  # read up
