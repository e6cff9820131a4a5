"""The audit cites what :func:`camab_rag.citations.cite` cites (review 7, finding 12: the
audit counted every document with a positive raw score as cited, so an unrelated one
scoring 0.36 here was "cited" and the summary's "never cited" count was too low)."""

from __future__ import annotations

import json
from pathlib import Path

from fakes import KeywordScorer

from camab_cli.audit import AuditConfig, audit
from camab_cli.audit.lines import attribution_settings
from camab_cli.records import Record, read_records
from camab_rag import attribute
from camab_rag.citations import cite

RECORD = {
    "id": "dune",
    "question": "Who wrote Dune?",
    "documents": [
        "Dune is a novel by Frank Herbert.",
        "Frank Sinatra sang in Paris.",  # shares "Frank": a small positive raw score
        "Paris is in France.",
    ],
    "response": "Frank Herbert wrote Dune.",
}


def test_the_audit_cites_what_cite_cites_and_keeps_the_raw_scores(tmp_path: Path) -> None:
    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps(RECORD) + "\n")
    config = AuditConfig(budget=8, granularity="chunk")
    summary = audit(
        source, tmp_path / "out.jsonl", scorer=KeywordScorer(), config=config, progress=False
    )
    [line] = [json.loads(x) for x in (tmp_path / "out.jsonl").read_text().splitlines()]
    # what the library's cite() cites for the same attribution, called here directly
    [(_, record)] = list(read_records(source))
    assert isinstance(record, Record)
    result = attribute(
        RECORD["question"],
        record.documents,
        RECORD["response"],
        KeywordScorer(),
        settings=attribution_settings(config),
    )
    answer = cite(result, record.documents)
    expected = [[answer.source(n).doc_index for n in s.citations] for s in answer.sentences]
    assert [c["cited"] for c in line["citations"]] == expected == [[0]]
    assert line["documents"]["cited"] == [0]
    assert line["documents"]["never_cited"] == [1, 2]
    # the raw scores stay in the JSON, the uncited segment marked so
    [sentence] = line["citations"]
    raw = [(s["doc_index"], s["cited"]) for s in sentence["segments"]]
    assert raw == [(0, True), (1, False)]
    assert sentence["segments"][1]["score"] > 0
    assert summary["documents"]["never_cited"] == 2


def test_a_sentence_the_verdict_rejects_cites_nothing_in_the_audit(tmp_path: Path) -> None:
    """Fresh-user review 8: an unsupported answer (an invented name) still cited the page
    its other words came from in the audit, while cite() of the same result with its
    verdict cites nothing."""
    invented = {**RECORD, "response": "Frank Herbert wrote Dune in 1921."}
    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps(invented) + "\n")
    config = AuditConfig(budget=8, granularity="chunk")
    audit(source, tmp_path / "out.jsonl", scorer=KeywordScorer(), config=config, progress=False)
    [line] = [json.loads(x) for x in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert line["groundedness"]["verdict"] == "unsupported"
    assert [c["cited"] for c in line["citations"]] == [[]]
    assert line["documents"]["cited"] == []
