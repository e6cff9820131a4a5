"""Reading an answer's attribution back (wait_for_attribution / await_attribution of
llama_index.postprocessor.camab, attribution_of of camab_rag.integration): the stored
result, a streamed answer's background attribution waited for (a thread's) or awaited (a
task's), and a KeyError naming what is missing."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import pytest
from llama_fakes import repo_tests_module
from llama_index.core.base.response.schema import Response
from llama_index.core.schema import NodeWithScore, TextNode
from llama_index.postprocessor.camab.answers import (
    await_attribution,
    set_attribution,
    wait_for_attribution,
)
from llama_index.postprocessor.camab.attributor import AnswerAttributor

from camab_rag import AttributionResult, AttributionSettings
from camab_rag.attributor import LOOP_ENDED as CANCELLED
from camab_rag.errors import AttributionCancelledError, AttributionPendingError
from camab_rag.integration import attribution_of, groundedness_of, pending

KeywordScorer = repo_tests_module("fakes.py").KeywordScorer
DOCS = [
    "Paris is the capital of France.",
    "Bananas are yellow and sweet.",
    "The Seine flows through Paris.",
]
QUESTION = "What is the capital of France?"
ANSWER = "Paris is the capital of France."
NODES = [NodeWithScore(node=TextNode(text=text)) for text in DOCS]


def answer_with_run(in_loop: bool) -> tuple[Any, AnswerAttributor]:
    """An answer whose placeholder a background attribution replaces with its result."""
    attributor = AnswerAttributor(KeywordScorer(), settings=AttributionSettings(budget=4, seed=1))
    answer = SimpleNamespace(metadata=None)

    def steps() -> Any:
        done = yield from attributor.steps(Response(ANSWER, list(NODES)), QUESTION, None)
        set_attribution(answer, done.metadata["attribution"])

    attributor.start(answer, steps(), in_loop=in_loop)
    return answer, attributor


def test_a_threads_attribution_is_waited_for_and_read_back() -> None:
    answer, runs = answer_with_run(in_loop=False)
    info = wait_for_attribution(answer, timeout=60)
    assert info["status"] == "ok" and len(info["document_scores"]) == 3
    result = attribution_of(answer)
    assert isinstance(result, AttributionResult) and result.n_queries == 4
    runs.runs.worker.close()


def test_a_tasks_attribution_is_awaited_not_waited_for() -> None:
    async def main() -> dict[str, Any]:
        answer, _ = answer_with_run(in_loop=True)
        with pytest.raises(AttributionPendingError, match=r"await await_attribution\(response\)"):
            wait_for_attribution(answer)  # its handle's result() says to await it
        return await await_attribution(answer)

    assert asyncio.run(main())["status"] == "ok"


def test_a_missing_attribution_is_a_key_error_saying_why() -> None:
    with pytest.raises(KeyError, match="read to the end"):
        wait_for_attribution(SimpleNamespace(metadata={}))
    with pytest.raises(KeyError, match="no metadata\\['attribution'\\]"):
        attribution_of(SimpleNamespace(metadata=None))


def test_a_result_still_pending_or_cancelled_is_a_typed_error_saying_so() -> None:
    """Read before its background attribution finished, a placeholder is neither a result
    nor a KeyError: 'scores': a typed error says it is pending and how to wait (a
    KeyError still, as a missing attribution is), or that it was cancelled."""
    answer = SimpleNamespace(metadata={"attribution": pending("run-1")})
    with pytest.raises(AttributionPendingError) as caught:
        attribution_of(answer)
    assert str(caught.value).startswith("the attribution has not finished yet (status 'pending')")
    assert "wait_for_attribution(response)" in str(caught.value)
    assert isinstance(caught.value, KeyError)
    with pytest.raises(AttributionPendingError, match=r"handler\.wait\(run_id\)"):
        AttributionResult.from_dict(pending("run-1"))
    with pytest.raises(AttributionPendingError, match="'pending'"):
        groundedness_of(answer)
    gone = {"status": "cancelled", "error": CANCELLED, "run_id": "run-1"}
    with pytest.raises(AttributionCancelledError, match=r"cancelled before it finished.*await"):
        attribution_of(SimpleNamespace(metadata={"attribution": gone}))


def test_an_attribution_is_set_on_an_answer_without_metadata() -> None:
    answer = SimpleNamespace(metadata=None)
    set_attribution(answer, {"status": "pending"})
    assert answer.metadata == {"attribution": {"status": "pending"}}
    with pytest.raises(KeyError, match="read to the end"):
        wait_for_attribution(SimpleNamespace())
