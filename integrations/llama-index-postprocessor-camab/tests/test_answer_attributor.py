"""Attributing a framework's answer object (llama_index.postprocessor.camab.answers and
its AnswerAttributor): the scorer built once per model, the documents an answer is
attributed to (its sources, else retrieved ones that reached the model), the failed
result of a problem found on the way, and the metadata an answer then carries."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import pytest
from llama_fakes import repo_tests_module
from llama_index.core.base.response.schema import Response
from llama_index.core.schema import NodeWithScore, TextNode
from llama_index.postprocessor.camab import CamabEventHandler
from llama_index.postprocessor.camab.answers import (
    answer_documents,
    set_attribution,
    wait_for_attribution,
)
from llama_index.postprocessor.camab.attributor import AnswerAttributor
from llama_index.postprocessor.camab.spans import ModelCall, SpanRecord

from camab_rag import AttributionSettings, GroundednessFilter
from camab_rag.errors import InputError, NoContextError
from camab_rag.integration import pending
from camab_rag.steps import drive

KeywordScorer = repo_tests_module("fakes.py").KeywordScorer
DOCS = [
    "Paris is the capital of France.",
    "Bananas are yellow and sweet.",
    "The Seine flows through Paris.",
]
QUESTION = "What is the capital of France?"
ANSWER = "Paris is the capital of France."
NODES = [NodeWithScore(node=TextNode(text=text)) for text in DOCS]

PROMPT = "Context:\n" + "\n".join(DOCS) + f"\n\nQuestion: {QUESTION}\nAnswer:"


def test_an_answer_is_attributed_to_its_sources_else_to_what_reached_the_model() -> None:
    assert answer_documents(ANSWER, NODES, ["other"], []) == (NODES, True)
    assert answer_documents(ANSWER, [], NODES, [PROMPT]) == (NODES, False)
    with pytest.raises(InputError, match="the response is empty"):
        answer_documents("  ", NODES, [], [])
    with pytest.raises(NoContextError, match="no nodes were retrieved"):
        answer_documents(ANSWER, [], [], [PROMPT])
    with pytest.raises(NoContextError, match="none of the 3 retrieved nodes reached the LLM"):
        answer_documents(ANSWER, [], NODES, ["a prompt without them"])


def test_options_are_checked_and_a_scorer_is_built_once_per_model() -> None:
    with pytest.raises(TypeError, match="unexpected keyword argument 'budjet'"):
        AnswerAttributor(budjet=4)  # type: ignore[call-arg]
    assert AnswerAttributor(budget=4, deadline_s=9).settings.deadline_s == 9.0
    with pytest.raises(InputError, match="settings must be an AttributionSettings, got dict"):
        AnswerAttributor(settings={"budget": 4})  # type: ignore[arg-type]
    attributor = AnswerAttributor(None, scorer_options={"timeout": 3})
    model = SimpleNamespace(api_base="http://127.0.0.1:9/v1", model="m")  # a served model
    built = attributor.scorers.get(model)  # by the one resolver, once per model
    assert built is attributor.scorers.get(model) and built.timeout == 3.0
    given = KeywordScorer()
    assert AnswerAttributor(given).scorers.get(model) is given
    with pytest.raises(TypeError, match=r"^Engine\(\) got an unexpected keyword argument 'llm'"):
        AnswerAttributor(owner="Engine", llm=model)  # type: ignore[call-arg]
    with pytest.raises(InputError, match="proxy must have a score"):
        AnswerAttributor(proxy=object())


def test_an_answer_with_retrieved_documents_that_reached_the_model_is_attributed() -> None:
    model = SimpleNamespace(scorer=KeywordScorer())
    settings = AttributionSettings(budget=4, seed=1)
    attributor = AnswerAttributor(None, settings=settings)
    record = SpanRecord("q", documents=list(NODES), calls=[ModelCall("llm", PROMPT, model)])
    response = drive(attributor.steps(Response(ANSWER), QUESTION, record, object()))
    summary, entries = response.metadata["attribution"], response.metadata["attribution"]["nodes"]
    assert response.source_nodes == [] and summary["node_source"] == "retrieval events"
    assert summary["status"] == "ok" and summary["prompt_mode"] == "captured"
    assert len(entries) == 3 and {e["n_queries"] for e in entries} == {4}
    assert entries[0]["rank"] == 1 and entries[0]["method"] == summary["method"]
    assert entries[0]["node_id"] == NODES[0].node_id  # the best first
    assert response.response == ANSWER and "groundedness" not in summary
    assert len(model.scorer.calls) >= 4  # the record's model scored


def test_a_problem_is_the_failed_result_and_a_blocking_filter_fails_closed() -> None:
    gate = GroundednessFilter(mode="block", fallback="Not sure.")
    attributor = AnswerAttributor(KeywordScorer(), groundedness=gate)
    answer = SimpleNamespace(response=ANSWER, metadata={})  # not a plain Response
    drive(attributor.steps(answer, QUESTION, None))
    summary = answer.metadata["attribution"]
    assert summary["status"] == "error" and "only a plain Response" in summary["error"]
    assert "node_ids" not in summary and summary["prompt_mode"] == "none"
    assert summary["groundedness"]["blocked"] is True
    empty = drive(attributor.steps(Response("", list(NODES)), QUESTION, None))
    assert "the response is empty" in empty.metadata["attribution"]["error"]
    assert empty.response == "Not sure." and empty.source_nodes == NODES  # fails closed


def test_a_handler_attributes_in_the_background_only_where_it_may() -> None:
    plain = CamabEventHandler(scorer=KeywordScorer())
    gate = GroundednessFilter(mode="block")
    blocking = CamabEventHandler(scorer=KeywordScorer(), groundedness=gate, background=None)
    forced = CamabEventHandler(scorer=KeywordScorer(), background=True)
    refused = CamabEventHandler(scorer=KeywordScorer(), background=False)
    assert not forced.in_background(False, True)  # no running event loop

    async def inside_a_loop() -> list[bool]:
        return [
            plain.in_background(False, True),  # an async call, by default
            plain.in_background(False, False),
            refused.in_background(False, True),
            forced.in_background(True, True),  # a stream: attributed once read
            blocking.in_background(False, True),  # judged before it is returned
        ]

    assert asyncio.run(inside_a_loop()) == [True, False, False, False, False]


def test_a_background_attribution_fills_the_pending_answer_in_place() -> None:
    attributor = AnswerAttributor(KeywordScorer(), settings=AttributionSettings(budget=4, seed=1))

    def steps(answer: Any) -> Any:
        done = yield from attributor.steps(Response(ANSWER, list(NODES)), QUESTION, None)
        set_attribution(answer, done.metadata["attribution"])

    thread_answer = SimpleNamespace(text="thread", metadata=None)
    attributor.start(thread_answer, steps(thread_answer), in_loop=False)
    assert wait_for_attribution(thread_answer, timeout=60)["status"] == "ok"

    async def in_a_loop() -> Any:
        task_answer = SimpleNamespace(text="task", metadata={})
        attributor.start(task_answer, steps(task_answer), in_loop=True, key="q1")
        assert task_answer.metadata["attribution"] == pending("q1")
        await attributor.runs.job("q1").aresult()
        return task_answer.metadata["attribution"]

    assert asyncio.run(in_a_loop())["status"] == "ok"


class _Answers(AnswerAttributor):
    """Attributes a ``SimpleNamespace`` answer in place (an integration's ``turn``)."""

    def turn(
        self, answer: Any, question: str, record: Any, llm: object = None, then: Any = None
    ) -> Any:
        done = yield from self.steps(Response(answer.text, list(NODES)), question, record, llm)
        set_attribution(answer, done.metadata["attribution"])
        return answer


def test_an_engine_call_is_asked_then_attributed_sync_async_or_in_the_background() -> None:
    attributor = _Answers(KeywordScorer(), settings=AttributionSettings(budget=4, seed=1))
    asked: list[str] = []

    def ask(question: str) -> SimpleNamespace:
        asked.append(question)
        return SimpleNamespace(text=ANSWER, metadata={})

    async def aask(question: str) -> SimpleNamespace:
        return ask(question)

    answer = attributor.answer(QUESTION, None, ask, "q1")
    assert asked == ["q1"] and answer.metadata["attribution"]["status"] == "ok"
    answer = asyncio.run(attributor.aanswer(QUESTION, None, aask, "q2"))
    assert asked[-1] == "q2" and answer.metadata["attribution"]["status"] == "ok"
