"""The integrations' kernel (camab_rag.integration): a
captured chain call attributed inline, async or in the background, kept by key; an error
becomes a failed result (strict raises it), a blocking filter fails closed; native
citations carry each document's source location."""

from __future__ import annotations

import asyncio
import json
from typing import Any
from uuid import UUID, uuid4

import pytest
from fakes import FailingScorer, KeywordScorer
from test_captured import ANSWER, DOCS, QUESTION

from camab_rag import AttributionResult, AttributionSettings, GroundednessFilter
from camab_rag.attributor import LOOP_ENDED as CANCELLED
from camab_rag.citations import cite
from camab_rag.integration import ChainCall, Runs, answer_summary, native_citations, pending
from camab_rag.steps import adrive, drive

PROMPT = "Context:\n" + "\n".join(DOCS) + f"\n\nQuestion: {QUESTION}\nAnswer:"


def call_with(scorer: Any, **fields: Any) -> ChainCall:
    return ChainCall(QUESTION, ANSWER, DOCS, scorer=lambda: scorer, prompts=[PROMPT], **fields)


def kept(result: AttributionResult) -> AttributionResult:
    return result


def test_a_chain_call_is_attributed_in_its_prompt_and_kept_by_key(smollm2_scorer: Any) -> None:
    runs: Runs[AttributionResult] = Runs(AttributionSettings(budget=4, seed=1))
    key = uuid4()
    attributed = drive(runs.steps(key, call_with(smollm2_scorer), kept))
    result = attributed
    assert result.status == "ok" and result.prompt_mode == "captured"
    assert result.n_queries == 4 and len(result.document_scores) == 3
    assert result.top_documents(1) == [0]  # the document the answer repeats
    assert runs.results[key] is attributed and runs.last_result is attributed
    assert runs.job().result() is attributed  # nothing ran in the background: the latest


def test_sync_and_async_runs_give_the_same_result() -> None:
    runs: Runs[AttributionResult] = Runs(AttributionSettings(budget=6, seed=2))
    sync = drive(runs.steps("a", call_with(KeywordScorer()), kept))
    async_ = asyncio.run(adrive(runs.steps("b", call_with(KeywordScorer()), kept)))
    assert sync.scores.tolist() == async_.scores.tolist()
    assert list(runs.results) == ["a", "b"]


def test_the_answer_summary_is_json_ready() -> None:
    runs: Runs[AttributionResult] = Runs(AttributionSettings(budget=6))
    result = drive(runs.steps("a", call_with(KeywordScorer()), kept))
    data = answer_summary(result, ["France", None])
    assert json.loads(json.dumps(data))["run_id"] == "a" and data["status"] == "ok"
    assert [d["title"] for d in data["documents"]] == ["France", None, None]
    # one entry per (sentence, document) that cite() cites: the native citations' rule
    cited = cite(result)
    expected = [cited.source(n).doc_index for n in cited.sentences[0].citations]
    # the top documents are the sources cite() shows (never every document), by score
    rank = {d["index"]: d["rank"] for d in data["documents"]}
    assert data["top_documents"] == sorted(expected, key=rank.__getitem__)
    assert [s.doc_index for s in cited.sources] == expected and len(expected) < 3
    assert [(c["sentence"], c["document"]) for c in data["citations"]] == [
        (ANSWER, d) for d in expected
    ]
    failed = answer_summary(AttributionResult.failed("down"))
    assert (failed["status"], failed["documents"], failed["groundedness"]) == ("error", [], None)


def test_an_error_becomes_a_failed_result_and_strict_raises_it() -> None:
    runs: Runs[AttributionResult] = Runs(AttributionSettings(budget=4))
    failed = drive(runs.steps(None, call_with(FailingScorer()), kept))
    assert failed.status == "error" and "scorer is down" in (failed.error or "")
    assert (failed.question, failed.response) == (QUESTION, ANSWER)
    assert failed.prompt_mode == "none" and len(runs.results) == 0
    assert (failed.method, failed.budget) == ("auto", 4)  # the settings', not the defaults

    explained = Runs[AttributionResult](
        AttributionSettings(budget=4), explain=lambda e: ValueError(f"explained: {e}")
    )
    result = drive(explained.steps(None, call_with(FailingScorer()), kept))
    assert result.error == "ValueError: explained: scorer is down"

    strict: Runs[AttributionResult] = Runs(AttributionSettings(budget=4), strict=True)
    with pytest.raises(RuntimeError, match="scorer is down"):
        drive(strict.steps(None, call_with(FailingScorer()), kept))


def test_a_blocking_filter_blocks_what_it_cannot_judge_and_a_flag_passes_it() -> None:
    problem = ValueError("no LLM answer was captured")
    for gate, blocked in ((GroundednessFilter(mode="block"), True), (GroundednessFilter(), False)):
        runs: Runs[AttributionResult] = Runs(AttributionSettings(budget=4), gate)
        scorer = KeywordScorer()
        attributed = drive(runs.steps(None, call_with(scorer, problem=problem), kept))
        assert attributed.status == "error"
        assert scorer.calls == []  # the problem is recorded without a model call
        verdict = attributed.groundedness
        assert verdict is not None and verdict.grounded is None
        assert verdict.blocked is blocked
        assert (verdict.answer != ANSWER) is blocked


def test_a_background_thread_attribution_is_waited_for_by_its_run_id() -> None:
    runs: Runs[AttributionResult] = Runs(AttributionSettings(budget=4), uuid_keys=True)
    run_id = uuid4()
    future = runs.start(run_id, runs.steps(str(run_id), call_with(KeywordScorer()), kept))
    try:
        waited: Any = runs.job(str(run_id)).result(timeout=60)
        assert waited.status == "ok" and waited is future.result()
        assert list(runs.results) == [run_id] and isinstance(next(iter(runs.pending)), UUID)
        assert asyncio.run(runs.job(run_id).aresult()) is waited
    finally:
        runs.worker.close()


def test_a_task_whose_loop_ends_first_reads_cancelled_with_how_to_wait() -> None:
    """One text for every cancelled attribution (issue 49: no how_to_wait threading)."""
    runs: Runs[AttributionResult] = Runs(AttributionSettings(budget=4))
    placeholder = pending("q1")

    async def leave_early() -> None:
        runs.start(
            "q1",
            runs.steps("q1", call_with(KeywordScorer()), kept),
            [placeholder, None],
            in_loop=True,
        )

    asyncio.run(leave_early())
    assert placeholder["status"] == "cancelled"
    assert placeholder["error"] == CANCELLED and "aflush()" in CANCELLED
    assert placeholder["run_id"] == "q1"

    async def flushed() -> str:
        target = pending("q2")
        runs.start("q2", runs.steps("q2", call_with(KeywordScorer()), kept), [target], in_loop=True)
        await runs.job("q2").aresult()
        return str(target["status"])

    assert asyncio.run(flushed()) == "pending"  # finished: nothing was cancelled
    assert runs.results["q2"].status == "ok"


def test_native_citations_name_each_documents_source_location() -> None:
    documents = [
        {"text": DOCS[0], "metadata": {"title": "France", "file_path": "/kb/france.md"}},
        {"text": DOCS[1], "metadata": {"url": "https://example.org/bananas"}},
        {"text": DOCS[2]},
    ]
    runs: Runs[AttributionResult] = Runs(AttributionSettings(budget=8))
    call = ChainCall(QUESTION, ANSWER, documents, scorer=KeywordScorer)
    result = drive(runs.steps(None, call, kept))
    citations = native_citations(result, documents)
    assert citations, "the answer's sentence cites the document it repeats"
    first, location = citations[0]
    assert (first.source.doc_index, first.source.number, first.source.title) == (0, 1, "France")
    assert location == "/kb/france.md"  # url, source, then file_path
    assert (first.sentence.start, first.sentence.end) == (0, len(ANSWER))
    assert first.cited_text == DOCS[0] and first.score > 0
    assert all(c.source.doc_index != 1 for c, _ in citations)  # the unrelated one is not cited
