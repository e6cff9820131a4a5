"""The groundedness filter inside the LangChain integration (fake model and scorer)."""

from __future__ import annotations

import asyncio
from typing import Any
from uuid import uuid4

import pytest
from langchain_camab import (
    AsyncCamabCallbackHandler,
    CamabAttributor,
    CamabCallbackHandler,
    groundedness_of,
)
from langchain_core.documents import Document
from langchain_core.messages import AIMessage
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnableLambda, RunnablePassthrough

from camab_rag import AttributionResult
from camab_rag.groundedness import FilteredAnswer, GroundednessFilter
from tests.fakes import FailingScorer, KeywordRetriever, KeywordScorer
from tests.unit_tests.test_handler import _chain

DOCS = [
    Document("Paris is the capital of France.", metadata={"title": "Paris"}),
    Document("Berlin is the capital of Germany.", metadata={"title": "Berlin"}),
]
QUESTION = {"input": "What is the capital city of France?"}
GROUNDED = "Paris is the capital of France."
UNGROUNDED = "Quokkas hop around Rottnest beaches nightly."
FALLBACK = "No supported answer."


def _rag(answer: Any) -> Any:
    retriever = KeywordRetriever(documents=DOCS, k=2)
    return RunnablePassthrough.assign(context=lambda x: retriever.invoke(x["input"])).assign(
        answer=RunnableLambda(lambda _x: answer)
    )


def _block(**kwargs: Any) -> GroundednessFilter:
    return GroundednessFilter(mode="block", fallback=FALLBACK, **kwargs)


def test_flag_attaches_the_verdict_and_keeps_the_answer() -> None:
    attributor = CamabAttributor(
        KeywordScorer(),
        budget=6,
        groundedness=GroundednessFilter(),
    )
    out = (_rag(AIMessage(UNGROUNDED)) | attributor).invoke(QUESTION)
    verdict = out["attribution"]["groundedness"]
    assert verdict["grounded"] is False and verdict["blocked"] is False
    assert verdict["mode"] == "flag" and verdict["report"]["decided_by"] == "calibration"
    assert out["answer"].content == UNGROUNDED
    assert out["answer"].response_metadata["attribution"]["groundedness"] == verdict
    result = attributor.last_result
    assert isinstance(result, AttributionResult) and isinstance(result.groundedness, FilteredAnswer)
    assert result.groundedness.to_dict() == verdict
    assert AttributionResult.from_dict(result.to_dict()).groundedness == result.groundedness
    # one type wherever it is read (LlamaIndex's groundedness_of returns it too)
    for holder in (out, out["answer"], out["attribution"], result):
        assert groundedness_of(holder) == result.groundedness
    with pytest.raises(KeyError, match="no groundedness"):
        groundedness_of(
            (_rag(AIMessage(GROUNDED)) | CamabAttributor(KeywordScorer())).invoke(QUESTION)
        )
    # the summary says whether the scores are exact and what the prompts cost
    assert out["attribution"]["exact"] is True and out["attribution"]["prompt_tokens"] > 0


def test_block_replaces_only_the_ungrounded_answer() -> None:
    attributor = CamabAttributor(KeywordScorer(), budget=6, groundedness=_block())
    bad = (_rag(AIMessage(UNGROUNDED, id="m1")) | attributor).invoke(QUESTION)
    assert isinstance(bad["answer"], AIMessage) and bad["answer"].content == FALLBACK
    assert bad["answer"].id == "m1"  # same message, new text, metadata kept
    verdict = bad["answer"].response_metadata["attribution"]["groundedness"]
    assert verdict["blocked"] and verdict["original_answer"] == UNGROUNDED
    good = (_rag(AIMessage(GROUNDED)) | attributor).invoke(QUESTION)
    assert good["answer"].content == GROUNDED
    assert good["attribution"]["groundedness"]["grounded"] is True
    # a plain string answer is replaced by a string
    text = (_rag(UNGROUNDED) | attributor).invoke(QUESTION)
    assert text["answer"] == FALLBACK


def test_block_in_async_chains() -> None:
    attributor = CamabAttributor(KeywordScorer(), budget=6, groundedness=_block())
    out = asyncio.run((_rag(UNGROUNDED) | attributor).ainvoke(QUESTION))
    assert out["answer"] == FALLBACK and out["attribution"]["groundedness"]["blocked"]


def test_assign_position_reports_the_answer_to_show() -> None:
    out = (
        _rag(UNGROUNDED)
        .assign(
            attribution=CamabAttributor(
                KeywordScorer(),
                budget=6,
                groundedness=_block(),
            )
        )
        .invoke(QUESTION)
    )
    assert out["answer"] == UNGROUNDED  # a sibling value cannot be replaced
    assert out["attribution"]["groundedness"]["answer"] == FALLBACK


def test_a_failed_attribution_is_blocked_by_default_or_passes_as_configured() -> None:
    passing = CamabAttributor(
        FailingScorer(),
        budget=6,
        groundedness=_block(on_error="pass"),
    )
    out = (_rag(UNGROUNDED) | passing).invoke(QUESTION)
    assert out["answer"] == UNGROUNDED and out["attribution"]["status"] == "error"
    assert out["attribution"]["groundedness"]["grounded"] is None
    # a blocking filter that cannot judge fails closed
    strict = CamabAttributor(FailingScorer(), budget=6, groundedness=_block())
    out = (_rag(UNGROUNDED) | strict).invoke(QUESTION)
    assert out["answer"] == FALLBACK and out["attribution"]["groundedness"]["blocked"]
    assert out["attribution"]["groundedness"]["grounded"] is None


def test_a_prompt_asking_by_question_is_filled_from_the_inputs_question() -> None:
    """Review 2 (session 67): a chain's own prompt says "{question}" where the step's input
    (create_retrieval_chain's keys) holds it under "input": every answer was blocked."""
    prompt = ChatPromptTemplate.from_messages([("human", "{context}\n\nQuestion: {question}")])
    strict = CamabAttributor(KeywordScorer(), budget=6, groundedness=_block(), prompt=prompt)
    out = (_rag(AIMessage(GROUNDED)) | strict).invoke(QUESTION)
    assert out["attribution"]["status"] == "ok"
    assert out["answer"].content == GROUNDED and not out["attribution"]["groundedness"]["blocked"]


def test_input_the_step_cannot_read_is_blocked_by_a_blocking_filter() -> None:
    """Review 11: a ``prompt=`` whose variables the input lacks (a ``KeyError`` while the
    step reads its input) let the answer through a ``mode="block"`` filter."""
    prompt = ChatPromptTemplate.from_messages([("human", "{context}\n\n{topic}: {question}")])
    strict = CamabAttributor(KeywordScorer(), budget=6, groundedness=_block(), prompt=prompt)
    out = (_rag(AIMessage(GROUNDED)) | strict).invoke(QUESTION)
    assert out["attribution"]["status"] == "error" and "needs others" in out["attribution"]["error"]
    assert out["answer"].content == FALLBACK and out["attribution"]["groundedness"]["blocked"]
    assert out["attribution"]["groundedness"]["grounded"] is None
    passing = CamabAttributor(
        KeywordScorer(), budget=6, groundedness=_block(on_error="pass"), prompt=prompt
    )
    out = (_rag(GROUNDED) | passing).invoke(QUESTION)
    assert out["answer"] == GROUNDED and not out["attribution"]["groundedness"]["blocked"]
    flagging = CamabAttributor(KeywordScorer(), budget=6, prompt=prompt)
    out = (_rag(GROUNDED) | flagging).invoke(QUESTION)
    assert out["answer"] == GROUNDED and out["attribution"]["groundedness"] is None


def test_filters_that_cannot_work_are_refused() -> None:
    with pytest.raises(ValueError, match="background=True"):
        CamabAttributor(
            KeywordScorer(),
            background=True,
            groundedness=_block(),
        )
    with pytest.raises(ValueError, match="CamabCallbackHandler observes"):
        CamabCallbackHandler(KeywordScorer(), groundedness=_block())
    with pytest.raises(ValueError, match="AsyncCamabCallbackHandler observes"):
        AsyncCamabCallbackHandler(KeywordScorer(), groundedness=_block())
    with pytest.raises(TypeError, match="GroundednessFilter"):
        CamabAttributor(KeywordScorer(), groundedness=0.22)  # type: ignore[arg-type]
    # flag mode works in the background and in handlers
    CamabAttributor(
        KeywordScorer(),
        background=True,
        groundedness=GroundednessFilter(),
    )


@pytest.mark.parametrize("handler_cls", [CamabCallbackHandler, AsyncCamabCallbackHandler])
def test_handlers_flag_answers(handler_cls: Any) -> None:
    handler = handler_cls(
        KeywordScorer(),
        budget=8,
        groundedness=GroundednessFilter(),
    )
    chain = _chain()
    # the fake model declines on Atlantis ("I do not know."): an abstention passes
    for question, grounded in (
        ("What is the capital of France?", True),
        ("What is the capital of Atlantis?", True),
    ):
        run_id = uuid4()
        config: Any = {"callbacks": [handler], "run_id": run_id}
        if handler_cls is CamabCallbackHandler:
            chain.invoke(question, config)
        else:
            asyncio.run(chain.ainvoke(question, config))
        verdict = handler.results[run_id].groundedness
        assert isinstance(verdict, FilteredAnswer)
        assert verdict.grounded is grounded and not verdict.blocked
        assert verdict.report is not None and verdict.report.extra_queries <= 2
        assert verdict.report.abstained is ("Atlantis" in question)


def test_budget_zero_judges_without_attributing() -> None:
    scorer = KeywordScorer()
    attributor = CamabAttributor(scorer, budget=0, groundedness=_block())
    bad = (_rag(AIMessage(UNGROUNDED)) | attributor).invoke(QUESTION)
    assert bad["answer"].content == FALLBACK and bad["attribution"]["groundedness"]["blocked"]
    assert len(scorer.calls) == 2  # the two anchor calls, nothing else
    assert bad["attribution"]["method"] == "none"
    good = (_rag(AIMessage(GROUNDED)) | attributor).invoke(QUESTION)
    verdict = good["attribution"]["groundedness"]
    assert good["answer"].content == GROUNDED and verdict["grounded"] is True
    assert verdict["report"]["sentences"][0]["source"] == "measured"
    assert len(scorer.calls) == 4
