"""The groundedness filter inside the LlamaIndex integration: a real VectorStoreIndex with
the real MiniLM embedding and LlamaIndex's MockLLM; a planted scorer decides which answers
the retrieved nodes explain, so the verdicts are known in advance."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from llama_fakes import FailingScorer, PlantedScorer, answered, attribution_info
from llama_index.core.llms import MockLLM
from llama_index.postprocessor.camab import (
    CamabEventHandler,
    CamabQueryEngine,
    attribution_of,
    groundedness_of,
)

from camab_rag.groundedness import GroundednessFilter
from camab_rag.settings import CHAIN_SETTINGS

QUESTION = "Who was Henry Roth?"
ANSWER = "Henry Roth"
FALLBACK = "No supported answer."


class _AnswerLLM(MockLLM):
    """MockLLM answering with words of the retrieved documents (the gate gives no credit
    for a word the context lacks, such as MockLLM's "text")."""

    def _generate_text(self, length: int) -> str:
        return ANSWER


def _engine(index: Any) -> Any:
    return index.as_query_engine(llm=_AnswerLLM(max_tokens=3), similarity_top_k=2)


def _supporting_scorer(index: Any) -> PlantedScorer:
    """The answer is likely only when the top retrieved node is in the prompt."""
    top = index.as_retriever(similarity_top_k=2).retrieve(QUESTION)[0]
    return PlantedScorer([f"title: {top.node.metadata['title']}\n"])


def _block(**kwargs: Any) -> GroundednessFilter:
    """A blocking filter on the score rule (``score >= 0.3`` passes) read strictly
    (``block_on="any"``): the planted scorer sets the score; every word of the answer is
    in the documents, so the calibrated verdict, or the default rule that blocks only an
    unchecked fact, would call a zero score only ``uncertain``."""
    kwargs.setdefault("threshold", 0.3)
    kwargs.setdefault("block_on", "any")
    return GroundednessFilter(mode="block", fallback=FALLBACK, **kwargs)


def test_flag_records_the_verdict_and_keeps_the_answer(index: Any) -> None:
    engine = CamabQueryEngine(
        _engine(index),
        PlantedScorer([]),
        budget=4,
        groundedness=GroundednessFilter(),
    )
    response = answered(engine.query(QUESTION))
    assert response.response == ANSWER
    verdict = groundedness_of(response)
    # the context explains nothing, but every word of the answer is in it: uncertain,
    # marked, not blocked
    assert verdict.verdict == "uncertain" and verdict.flagged and not verdict.blocked
    assert verdict.grounded is True and verdict.mode == "flag"
    assert verdict.report is not None and verdict.report.score == pytest.approx(0.0)
    assert attribution_info(response)["groundedness"] == verdict.to_dict()
    assert attribution_of(response).status == "ok"  # the extra key does not disturb it


def test_block_replaces_only_unsupported_answers(index: Any) -> None:
    blocked = answered(
        CamabQueryEngine(
            _engine(index),
            PlantedScorer([]),
            budget=4,
            groundedness=_block(),
        ).query(QUESTION)
    )
    assert blocked.response == FALLBACK
    verdict = groundedness_of(blocked)
    assert verdict.blocked and verdict.original_answer == ANSWER
    assert blocked.source_nodes  # the sources stay, for the UI to show why
    kept = answered(
        CamabQueryEngine(
            _engine(index),
            _supporting_scorer(index),
            budget=4,
            groundedness=_block(threshold=0.3),
        ).query(QUESTION)
    )
    assert kept.response == ANSWER
    good = groundedness_of(kept)
    assert good.grounded is True and good.report is not None
    # the planted reward: L(C) = -2, L(empty) = -3; the context explains a third
    assert good.report.score == pytest.approx(1 / 3)
    assert (good.report.full_reward, good.report.empty_reward) == pytest.approx((-2.0, -3.0))
    assert good.report.extra_queries <= 2


def test_the_default_rule_shows_an_answer_with_no_unchecked_fact_marked(index: Any) -> None:
    """Issue 48: a blocking filter with the default rule (``block_on="facts"``) shows an
    answer whose words are all in the documents, marked ``uncertain``, where the stricter
    rule blocks it (above)."""
    gate = GroundednessFilter(mode="block", fallback=FALLBACK, threshold=0.3)
    engine = CamabQueryEngine(_engine(index), PlantedScorer([]), budget=4, groundedness=gate)
    response = answered(engine.query(QUESTION))
    assert response.response == ANSWER
    verdict = groundedness_of(response)
    assert verdict.verdict == "uncertain" and verdict.flagged and not verdict.blocked


def test_block_in_aquery(index: Any) -> None:
    engine = CamabQueryEngine(
        _engine(index),
        PlantedScorer([]),
        budget=4,
        groundedness=_block(),
    )
    response = answered(asyncio.run(engine.aquery(QUESTION)))
    assert response.response == FALLBACK and groundedness_of(response).blocked


def test_failed_attribution_is_blocked_by_default_or_passes_as_configured(index: Any) -> None:
    passing = CamabQueryEngine(
        _engine(index),
        FailingScorer(),
        budget=4,
        groundedness=_block(on_error="pass"),
    )
    response = answered(passing.query(QUESTION))
    assert response.response == ANSWER
    assert attribution_info(response)["status"] == "error"
    assert groundedness_of(response).grounded is None
    # a blocking filter that cannot judge fails closed
    strict = CamabQueryEngine(
        _engine(index),
        FailingScorer(),
        budget=4,
        groundedness=_block(),
    )
    blocked = answered(strict.query(QUESTION))
    assert blocked.response == FALLBACK and groundedness_of(blocked).grounded is None


def test_event_handler_blocks_inline_even_in_aquery(index: Any) -> None:
    handler = CamabEventHandler.attach(
        scorer=PlantedScorer([]),
        budget=4,
        groundedness=_block(),
    )
    try:
        response = asyncio.run(_engine(index).aquery(QUESTION))
    finally:
        handler.detach()
    # no aflush needed: a blocking filter judges before the query returns
    assert response.response == FALLBACK
    assert groundedness_of(response).original_answer == ANSWER


def test_settings_that_cannot_work_are_refused(index: Any) -> None:
    # pydantic wraps the InputError (a ValueError) of the handler's validation
    with pytest.raises(ValueError, match="mode='block'"):
        CamabEventHandler(
            scorer=PlantedScorer([]),
            background=True,
            groundedness=_block(),
        )
    with pytest.raises(TypeError, match="GroundednessFilter"):
        CamabQueryEngine(
            _engine(index),
            PlantedScorer([]),
            groundedness=0.5,  # type: ignore[arg-type]
        )
    with pytest.raises(KeyError, match="groundedness"):
        groundedness_of(
            CamabQueryEngine(
                _engine(index), PlantedScorer([]), settings=CHAIN_SETTINGS.with_changes(budget=4)
            ).query(QUESTION)
        )


def test_budget_zero_judges_without_attributing(index: Any) -> None:
    scorer = _supporting_scorer(index)
    engine = CamabQueryEngine(
        _engine(index),
        scorer,
        budget=0,
        groundedness=_block(threshold=0.3),
    )
    response = answered(engine.query(QUESTION))
    verdict = groundedness_of(response)
    assert response.response == ANSWER and verdict.grounded is True
    assert verdict.report is not None and verdict.report.token_support is not None
    result = attribution_of(response)
    assert result.method == "none" and result.n_queries == 2
    blocked = answered(
        CamabQueryEngine(
            _engine(index),
            PlantedScorer([]),
            budget=0,
            groundedness=_block(),
        ).query(QUESTION)
    )
    assert blocked.response == FALLBACK and groundedness_of(blocked).blocked
