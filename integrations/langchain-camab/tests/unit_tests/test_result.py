"""Shape of the metadata left on answers and documents."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import numpy as np

from camab_rag.integration import answer_summary as summary
from camab_rag.integration import document_ranks
from camab_rag.integration import document_summary as document_metadata
from camab_rag.result import AttributionResult, StatementAttribution
from camab_rag.segments import Segment


def _result() -> AttributionResult:
    segments = [Segment("a", 0, 0, 1), Segment("b", 1, 0, 1), Segment("c", 2, 0, 1)]
    base = AttributionResult(
        scores=np.array([0.1, 0.9, -0.2]),
        segments=segments,
        budget=8,
        n_queries=8,
        n_documents=3,
        statements=[
            StatementAttribution("First.", 0, 6, np.array([0.0, 0.5, 0.0])),
            StatementAttribution("Second.", 7, 14, np.array([0.3, 0.1, 0.0])),
            StatementAttribution("Third.", 15, 21, np.array([-0.1, -0.1, -0.1])),
        ],
    )
    return replace(base, prompt_mode="captured", run_id="r1")


def test_ranks_are_one_based_best_first() -> None:
    assert document_ranks(_result()) == [2, 1, 3]


def test_document_metadata_shape() -> None:
    entries = document_metadata(_result(), 3)
    assert [e["rank"] for e in entries] == [2, 1, 3]
    assert entries[1] == {
        "status": "ok",
        "score": 0.9,
        "rank": 1,
        # "Second." gives it 0.1: 0.1 over the best unrelated source (0.0), above the
        # default bar of 0.05 (CitationRule; it was 0.11 before the dev rows chose 0.05)
        "supporting_sentences": ["First.", "Second."],
        "disputes": [],
    }
    assert entries[0]["supporting_sentences"] == ["Second."]
    assert entries[2]["supporting_sentences"] == []  # "Third." has no positive support


def test_summary_is_json_ready_and_complete() -> None:
    data = summary(_result(), ["A", "B", None])
    json.dumps(data)
    assert data["status"] == "ok" and data["prompt_mode"] == "captured"
    assert data["top_documents"] == [1, 0]  # the cited documents, by score (not the 3rd)
    assert data["documents"][1] == {"index": 1, "score": 0.9, "rank": 1, "title": "B", "label": "B"}
    # the index counts from 0, words from 1 (summary(), cite()): the label bridges them
    assert data["documents"][2]["label"] == "Document 3"
    assert data["citations"] == [
        {"sentence": "First.", "document": 1},
        {"sentence": "Second.", "document": 0},
        {"sentence": "Second.", "document": 1},
        {"sentence": "Third.", "document": None},
    ]


def test_failure_metadata() -> None:
    failed = AttributionResult.failed("boom", run_id="r2")
    assert isinstance(failed, AttributionResult)
    assert summary(failed)["status"] == "error"
    assert summary(failed)["error"] == "boom"
    assert document_metadata(failed, 2) == [{"status": "error", "error": "boom"}] * 2


def test_round_trip_keeps_chain_fields() -> None:
    result = _result()
    again = AttributionResult.from_dict(json.loads(json.dumps(result.to_dict())))
    assert again.prompt_mode == "captured" and again.run_id == "r1"
    np.testing.assert_allclose(again.scores, result.scores)


def test_citations_over_documents_that_were_not_attributed_never_break_the_chain(
    caplog: Any,
) -> None:
    """cite() refuses documents edited since the attribution; the answer then carries its
    metadata without citations, and the chain goes on (a warning says why)."""
    from langchain_camab.native import annotate
    from langchain_core.documents import Document
    from langchain_core.messages import AIMessage

    result = replace(_result(), response="First. Second. Third.")
    message = AIMessage(content=result.response)
    docs = [Document(page_content=text) for text in ("a", "b", "c")]
    annotate(message, {"status": "ok"}, result, docs)
    assert isinstance(message.content, list)  # cited: one text block with annotations
    edited = AIMessage(content=result.response)
    annotate(edited, {"status": "ok"}, result, [Document(page_content=t) for t in "axc"])
    assert edited.content == result.response
    assert edited.response_metadata["attribution"] == {"status": "ok"}
    assert "no citations on the answer" in caplog.text
