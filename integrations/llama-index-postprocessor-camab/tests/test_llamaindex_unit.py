"""Pure-logic tests: the post-processor, metadata hygiene, prompt capture and the keying of
concurrent queries (a real VectorStoreIndex with the real MiniLM embedding and LlamaIndex's
own MockLLM; a planted scorer stands in for the model so the expected ranking is known)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from llama_fakes import FailingScorer, PlantedScorer, answered, attribution_info
from llama_index.core import Document, SummaryIndex
from llama_index.core.base.llms.types import CompletionResponse
from llama_index.core.base.response.schema import (
    AsyncStreamingResponse,
    Response,
    StreamingResponse,
)
from llama_index.core.instrumentation import get_dispatcher
from llama_index.core.instrumentation.event_handlers import BaseEventHandler
from llama_index.core.instrumentation.events import BaseEvent
from llama_index.core.llms import MockLLM
from llama_index.core.llms.callbacks import llm_completion_callback
from llama_index.core.schema import MetadataMode, NodeWithScore, QueryBundle, TextNode
from llama_index.postprocessor.camab import (
    ATTRIBUTION_KEY,
    AttributionProgressEvent,
    AttributionSettings,
    CamabChatEngine,
    CamabEventHandler,
    CamabNodePostprocessor,
    CamabQueryEngine,
    attribute_response,
    attribution_of,
    await_attribution,
    groundedness_of,
    wait_for_attribution,
)
from llama_index.postprocessor.camab.answers import _with_attribution
from llama_index.postprocessor.camab.spans import ModelCall
from pydantic import Field

from camab_rag.errors import (
    AttributionCancelledError,
    AttributionPendingError,
    AttributionWarning,
    InputError,
)
from camab_rag.prompts import plan_prompt
from camab_rag.scorers import resolve_scorer
from camab_rag.segments import SourceDocument
from camab_rag.settings import CHAIN_SETTINGS


# ---------------------------------------------------------------------- helpers
def attributed(score: float | None, name: str, retrieval: float = 0.5) -> NodeWithScore:
    metadata: dict[str, Any] = {"title": name}
    if score is not None:
        metadata[ATTRIBUTION_KEY] = {"score": score, "rank": 0}
    return NodeWithScore(node=TextNode(text=f"text of {name}", metadata=metadata), score=retrieval)


def names(nodes: Sequence[NodeWithScore]) -> list[str]:
    return [n.node.metadata["title"] for n in nodes]


class SlowMockLLM(MockLLM):
    """LlamaIndex's MockLLM whose async completion yields to the loop (so concurrent
    queries interleave)."""

    @llm_completion_callback()
    async def acomplete(
        self, prompt: str, formatted: bool = False, **kwargs: Any
    ) -> CompletionResponse:
        await asyncio.sleep(0.05)
        return CompletionResponse(text="text text text")


# ---------------------------------------------------------------------- post-processor
def test_postprocessor_orders_by_attribution_and_keeps_retrieval_scores() -> None:
    nodes = [attributed(0.1, "a", 0.9), attributed(0.7, "b", 0.2), attributed(-0.2, "c", 0.5)]
    out = CamabNodePostprocessor().postprocess_nodes(nodes)
    assert names(out) == ["b", "a", "c"]
    assert [n.score for n in out] == [0.2, 0.9, 0.5]


def test_postprocessor_top_k_and_threshold() -> None:
    nodes = [
        attributed(0.1, "a"),
        attributed(0.7, "b"),
        attributed(-0.2, "c"),
        attributed(0.4, "d"),
    ]
    assert names(CamabNodePostprocessor(top_k=2).postprocess_nodes(nodes)) == ["b", "d"]
    assert names(CamabNodePostprocessor(threshold=0.1).postprocess_nodes(nodes)) == ["b", "d", "a"]
    both = CamabNodePostprocessor(top_k=1, threshold=0.0).postprocess_nodes(nodes)
    assert names(both) == ["b"]
    assert CamabNodePostprocessor(threshold=5.0).postprocess_nodes(nodes) == []


def test_postprocessor_ties_keep_input_order() -> None:
    nodes = [attributed(0.3, "x"), attributed(0.3, "y"), attributed(0.3, "z")]
    assert names(CamabNodePostprocessor(top_k=2).postprocess_nodes(nodes)) == ["x", "y"]


def test_postprocessor_missing_attribution() -> None:
    nodes = [attributed(None, "plain"), attributed(0.2, "a")]
    with pytest.raises(ValueError, match="carries no metadata\\['attribution'\\]"):
        CamabNodePostprocessor().postprocess_nodes(nodes)
    kept = CamabNodePostprocessor(top_k=1, missing="keep").postprocess_nodes(nodes)
    assert names(kept) == ["a", "plain"]
    assert names(CamabNodePostprocessor(missing="drop").postprocess_nodes(nodes)) == ["a"]


def test_postprocessor_in_node_postprocessors_says_where_it_belongs(index: Any) -> None:
    """Users put post-processors in node_postprocessors=[...]; this one needs the nodes of
    an attributed answer, so there it fails with a message that says so."""
    engine = index.as_query_engine(
        llm=MockLLM(max_tokens=2), node_postprocessors=[CamabNodePostprocessor(top_k=1)]
    )
    with pytest.raises(ValueError, match=r"not a node_postprocessors=\[\.\.\.\] entry"):
        engine.query("Who was Henry Roth?")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"top_k": 0}, "top_k"),
        ({"top_k": 1.5}, "top_k"),
        ({"threshold": float("nan")}, "threshold"),
        ({"threshold": "high"}, "threshold"),
        ({"missing": "ignore"}, "missing"),
    ],
)
def test_postprocessor_bad_arguments(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(InputError, match=message):
        CamabNodePostprocessor(**kwargs)


def test_postprocessor_refuses_a_misspelled_keyword() -> None:
    with pytest.raises(TypeError, match="unexpected keyword 'topk'"):
        CamabNodePostprocessor(topk=2)  # type: ignore[call-arg]
    assert CamabNodePostprocessor(callback_manager=None).top_k is None  # a real field passes


async def test_postprocessor_async_path() -> None:
    nodes = [attributed(0.1, "a"), attributed(0.7, "b")]
    out = await CamabNodePostprocessor(top_k=1).apostprocess_nodes(nodes, query_str="q")
    assert names(out) == ["b"]


# ---------------------------------------------------------------------- metadata hygiene
def test_attribution_never_leaks_into_llm_or_embedding_text() -> None:
    node = TextNode(text="Paris is in France.", metadata={"title": "Paris"})
    copy = _with_attribution(node, {"score": 0.5, "rank": 1})
    assert copy.metadata[ATTRIBUTION_KEY]["score"] == 0.5
    assert ATTRIBUTION_KEY not in node.metadata  # the original is untouched
    for mode in (MetadataMode.LLM, MetadataMode.EMBED):
        content = copy.get_content(metadata_mode=mode)
        assert "title: Paris" in content
        assert "score" not in content and ATTRIBUTION_KEY not in content
    assert ATTRIBUTION_KEY in copy.get_content(metadata_mode=MetadataMode.ALL)


# ---------------------------------------------------------------------- prompt choice
DOCS = [SourceDocument("title: A\n\nAlpha text."), SourceDocument("title: B\n\nBeta text.")]


def call(prompt: Any, span: str = "s") -> ModelCall:
    return ModelCall(span, prompt, None, frozenset())


def test_captured_prompt_is_used_when_it_contains_every_node() -> None:
    messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": f"Context:\n{DOCS[0].text}\n\n{DOCS[1].text}\nQ?"},
    ]
    plan = plan_prompt([call("unrelated").prompt, call(messages).prompt], DOCS, "chunk")
    builder = plan.builder
    assert plan.mode == "captured" and builder is not None
    ablated = builder.build(np.array([False, True]))
    assert not isinstance(ablated, str)  # the chat messages, ablated
    assert "Alpha" not in ablated[1]["content"] and "Beta text." in ablated[1]["content"]
    assert ablated[0] == messages[0]


def test_template_fallback_is_reported() -> None:
    plan = plan_prompt([call(f"only {DOCS[0].text}").prompt], DOCS, "chunk")
    assert plan.builder is None and plan.mode == "template"
    assert "default template" in (plan.note or "")
    plan = plan_prompt([], DOCS, "chunk")
    assert plan.mode == "template" and "no prompt was captured" in (plan.note or "")


# ---------------------------------------------------------------------- scorers
def test_scorer_from_llm_errors_name_the_fix() -> None:
    with pytest.raises(InputError, match="pass scorer="):
        resolve_scorer(llm=None)
    with pytest.raises(InputError, match=r"MockLLM has no base URL.*not an OpenAI-compatible"):
        resolve_scorer(llm=MockLLM())


def test_scorer_from_openai_like_targets_its_server() -> None:
    from llama_index.llms.openai_like import OpenAILike

    llm = OpenAILike(model="smollm2", api_base="http://127.0.0.1:9/v1", api_key="sk-secret")
    scorer = resolve_scorer(llm=llm)
    assert callable(getattr(scorer, "score", None))
    assert "sk-secret" not in repr(scorer)
    assert "127.0.0.1:9" in repr(scorer) or "127.0.0.1:9" in str(vars(scorer))


def test_engine_rejects_bad_arguments(index: Any) -> None:
    engine = index.as_query_engine(llm=MockLLM(max_tokens=3))
    with pytest.raises(InputError, match="BaseQueryEngine"):
        CamabQueryEngine(object())  # type: ignore[arg-type]
    with pytest.raises(InputError, match="budget"):
        CamabQueryEngine(engine, settings=CHAIN_SETTINGS.with_changes(budget=0))
    with pytest.raises(InputError, match="granularity"):
        CamabQueryEngine(engine, settings=CHAIN_SETTINGS.with_changes(granularity="word"))  # type: ignore[arg-type]
    with pytest.raises(InputError, match="score"):
        CamabQueryEngine(engine, scorer=object())
    with pytest.raises(InputError, match="unknown method 'camba'"):
        CamabQueryEngine(engine, settings=CHAIN_SETTINGS.with_changes(method="camba"))
    with pytest.raises(InputError, match="bad options"):
        CamabQueryEngine(engine, settings=CHAIN_SETTINGS.with_changes(batchsize=2))


def test_every_entry_point_refuses_settings_that_are_not_settings(index: Any) -> None:
    """A dict of knobs is not silently ignored: the engines and the handler name the type."""
    engine = index.as_query_engine(llm=MockLLM(max_tokens=3))
    with pytest.raises(InputError, match="settings must be an AttributionSettings, got dict"):
        CamabQueryEngine(engine, settings={"budget": 8})  # type: ignore[arg-type]
    with pytest.raises(InputError, match="settings must be an AttributionSettings, got dict"):
        CamabEventHandler(settings={"budget": 8})  # type: ignore[arg-type]


def test_the_engines_refuse_a_keyword_they_do_not_have(index: Any) -> None:
    """Their options pass through **options: a keyword they do not take (a misspelled
    knob) is an error naming it, never silently dropped."""
    engine = index.as_query_engine(llm=MockLLM(max_tokens=3))
    with pytest.raises(TypeError, match="unexpected keyword argument 'budjet'"):
        CamabQueryEngine(engine, budjet=8)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="unexpected keyword argument 'budjet'"):
        attribute_response(Response("a"), "q", scorer=PlantedScorer([]), budjet=8)  # type: ignore[call-arg]


def test_the_engines_take_the_everyday_knobs_as_keywords(index: Any) -> None:
    """``CamabQueryEngine(qe, scorer=s, budget=8, granularity="chunk")`` (a TypeError
    before): the knobs of camab_rag.attribute, merged over CHAIN_SETTINGS, a keyword
    winning over settings=; the chat engine, attribute_response and the handler too."""
    from camab_rag import GroundednessFilter

    engine = index.as_query_engine(llm=MockLLM(max_tokens=3), similarity_top_k=2)
    question = "Who was Henry Roth?"
    top = engine.retrieve(QueryBundle(question))[0].node.get_content()
    scorer = PlantedScorer([top.split(". ")[0]])
    camab = CamabQueryEngine(engine, scorer=scorer, budget=8, granularity="chunk")
    assert camab.settings == CHAIN_SETTINGS.with_changes(budget=8)
    info = attribution_info(camab.query(question))
    assert info["status"] == "ok" and info["budget"] == 8
    assert info["exact"] and info["n_queries"] == 4  # 2 nodes: all 4 subsets, budget 8
    gate = GroundednessFilter()
    knobs = {"method": "loo", "granularity": "sentence", "deadline_s": 9, "groundedness": gate}
    settings = CHAIN_SETTINGS.with_changes(budget=40, seed=2)
    chat = index.as_chat_engine(chat_mode="context", llm=MockLLM(max_tokens=3))
    for made in (
        CamabQueryEngine(engine, scorer, budget=5, settings=settings, **knobs),
        CamabChatEngine(chat, scorer, budget=5, settings=settings, **knobs),
        CamabEventHandler(scorer=scorer, budget=5, settings=settings, **knobs),
    ):
        chosen = made.settings
        assert (chosen.budget, chosen.seed, chosen.method_instance.name) == (5, 2, "loo")
        assert (chosen.granularity, chosen.deadline_s) == ("sentence", 9.0)
        assert made._attributor.runs.gate is gate  # held beside the settings
    nodes = [NodeWithScore(node=TextNode(text=t)) for t in (top, "Bananas are yellow.")]
    answer = Response(top.split(". ")[0], nodes)
    attribute_response(answer, question, scorer=scorer, budget=3, method="loo")
    assert (attribution_info(answer)["method"], attribution_info(answer)["budget"]) == ("loo", 3)
    with pytest.raises(InputError, match="budget must be >= 1"):
        CamabQueryEngine(engine, scorer, budget=-1)


# ---------------------------------------------------------------------- keying
def planted_titles(index: Any, questions: Sequence[str]) -> list[str]:
    """For each question, a retrieved title that no other question retrieves."""
    retrieved = [
        [n.node.metadata["title"] for n in index.as_retriever(similarity_top_k=3).retrieve(q)]
        for q in questions
    ]
    chosen = []
    for i, titles in enumerate(retrieved):
        others = {t for j, ts in enumerate(retrieved) if j != i for t in ts}
        own = [t for t in titles if t not in others]
        assert own, f"questions {questions} retrieve the same titles"
        chosen.append(own[0])
    return chosen


async def test_concurrent_aqueries_keep_their_attributions_apart(
    index: Any, hotpot_rows: list[dict[str, Any]]
) -> None:
    questions = [row["question"] for row in hotpot_rows]
    planted = planted_titles(index, questions)
    scorer = PlantedScorer([f"title: {t}\n" for t in planted], delay=0.01)
    engine = index.as_query_engine(llm=SlowMockLLM(max_tokens=3), similarity_top_k=3)
    camab = CamabQueryEngine(engine, scorer, settings=CHAIN_SETTINGS.with_changes(budget=8))
    responses = await asyncio.gather(*(camab.aquery(q) for q in questions))
    for question, title, response in zip(questions, planted, responses):
        info = attribution_info(response)
        assert info["status"] == "ok", info["error"]
        assert info["question"] == question
        assert info["prompt_mode"] == "captured"
        assert info["node_ids"] == [n.node.node_id for n in response.source_nodes]
        ranked = sorted(
            response.source_nodes, key=lambda n: n.node.metadata[ATTRIBUTION_KEY]["rank"]
        )
        assert ranked[0].node.metadata["title"] == title
        assert ranked[0].node.metadata[ATTRIBUTION_KEY]["score"] == pytest.approx(1.0, abs=0.05)
        others = [n.node.metadata[ATTRIBUTION_KEY]["score"] for n in ranked[1:]]
        assert max(abs(s) for s in others) < 0.05
        assert attribution_of(response).n_queries <= 8


async def test_handler_keys_concurrent_queries_by_span(
    index: Any, hotpot_rows: list[dict[str, Any]]
) -> None:
    questions = [row["question"] for row in hotpot_rows]
    planted = planted_titles(index, questions)
    scorer = PlantedScorer([f"title: {t}\n" for t in planted], delay=0.01)
    engine = index.as_query_engine(llm=SlowMockLLM(max_tokens=3), similarity_top_k=3)
    handler = CamabEventHandler.attach(
        scorer=scorer, settings=CHAIN_SETTINGS.with_changes(budget=8)
    )
    try:
        responses = await asyncio.gather(*(engine.aquery(q) for q in questions))
        await handler.aflush()
        sync_response = engine.query(questions[0])  # inline in a worker-free sync call
    finally:
        handler.detach()
    for question, title, response in zip(questions, planted, responses):
        info = response.metadata[ATTRIBUTION_KEY]
        assert info["status"] == "ok", info["error"]
        assert info["question"] == question
        top = min(response.source_nodes, key=lambda n: n.node.metadata[ATTRIBUTION_KEY]["rank"])
        assert top.node.metadata["title"] == title
    assert {r["query"] for r in handler.results} == set(questions)
    assert all(r["attribution"]["status"] == "ok" and r["query_id"] for r in handler.results)
    assert sync_response.metadata[ATTRIBUTION_KEY]["status"] == "ok"
    # detached: later queries are left alone
    assert ATTRIBUTION_KEY not in (engine.query(questions[1]).metadata or {})


def test_failing_scorer_returns_the_response_unchanged(index: Any) -> None:
    engine = index.as_query_engine(llm=MockLLM(max_tokens=4), similarity_top_k=2)
    plain = answered(engine.query("Who was Henry Roth?"))
    response = answered(
        CamabQueryEngine(
            engine, FailingScorer(), settings=CHAIN_SETTINGS.with_changes(budget=4)
        ).query("Who was Henry Roth?")
    )
    assert response.response == plain.response == "text text text text"
    assert [n.node.node_id for n in response.source_nodes] == [
        n.node.node_id for n in plain.source_nodes
    ]
    assert [n.score for n in response.source_nodes] == [n.score for n in plain.source_nodes]
    assert all(ATTRIBUTION_KEY not in n.node.metadata for n in response.source_nodes)
    info = attribution_info(response)
    assert info["status"] == "error"
    assert "scorer exploded on purpose" in info["error"]


class ScriptedLLM(MockLLM):
    """An LLM that writes ``texts`` in turn (the last one again and again); writing
    nothing, LlamaIndex answers "Empty Response" in its place."""

    texts: list[str] = Field(default_factory=lambda: [""])
    calls: int = 0

    @llm_completion_callback()
    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        self.calls += 1
        return CompletionResponse(text=self.texts[min(self.calls, len(self.texts)) - 1])


def test_the_frameworks_placeholder_for_an_empty_answer_is_not_attributed(index: Any) -> None:
    engine = index.as_query_engine(llm=ScriptedLLM(max_tokens=2), similarity_top_k=2)
    settings = CHAIN_SETTINGS.with_changes(budget=4)
    wrapped = CamabQueryEngine(engine, PlantedScorer(["Roth"]), settings=settings)
    response = answered(wrapped.query("Q?"))
    assert response.response == "Empty Response"  # LlamaIndex's text, not the model's
    info = attribution_info(response)
    assert info["status"] == "error" and "the framework's placeholder" in info["error"]
    assert all(ATTRIBUTION_KEY not in n.node.metadata for n in response.source_nodes)
    handler = CamabEventHandler.attach(scorer=PlantedScorer(["Roth"]), settings=settings)
    try:
        by_handler = attribution_info(engine.query("Q?"))
    finally:
        handler.detach()
    assert by_handler["status"] == "error" and "placeholder" in by_handler["error"]
    spoken = index.as_query_engine(llm=MockLLM(max_tokens=2), similarity_top_k=2)
    ok = CamabQueryEngine(spoken, PlantedScorer(["Roth"]), settings=settings).query("Q?")
    assert attribution_info(ok)["status"] == "ok"  # a written answer is attributed
    # refine keeps the first call's answer when a later refine step writes nothing
    llm = ScriptedLLM(max_tokens=2)
    llm.texts = ["Henry Roth wrote it.", ""]
    refine = index.as_query_engine(llm=llm, similarity_top_k=3, response_mode="refine")
    rewrapped = CamabQueryEngine(refine, PlantedScorer(["Roth"]), settings=settings)
    kept = answered(rewrapped.query("Q?"))
    assert (kept.response, llm.calls) == ("Henry Roth wrote it.", 3)
    assert attribution_info(kept)["status"] == "ok"


def test_the_one_document_warning_points_at_the_users_line() -> None:
    one = SummaryIndex.from_documents([Document(text="Roth was born.\n\nBananas are yellow.")])
    engine = one.as_query_engine(llm=MockLLM(max_tokens=2))
    settings = CHAIN_SETTINGS.with_changes(budget=4, granularity="chunk")
    wrapped = CamabQueryEngine(engine, PlantedScorer(["Roth"]), settings=settings)
    with pytest.warns(AttributionWarning, match="formatted into one string") as caught:
        wrapped.query("Q?")
    assert _ours(caught).filename == __file__  # not the dispatcher's or camab's own line
    handler = CamabEventHandler.attach(scorer=PlantedScorer(["Roth"]), settings=settings)
    try:
        with pytest.warns(AttributionWarning) as caught:
            engine.query("Q?")
    finally:
        handler.detach()
    assert _ours(caught).filename == __file__


def _ours(caught: Any) -> Any:
    """The first AttributionWarning caught: pytest.warns records every warning, and another
    library's thread (aiosqlite's, in one CI run) may warn inside the block first."""
    return next(w for w in caught if issubclass(w.category, AttributionWarning))


def test_no_scorer_and_no_openai_llm_is_recorded_not_raised(index: Any) -> None:
    engine = index.as_query_engine(llm=MockLLM(max_tokens=2), similarity_top_k=2)
    response = answered(
        CamabQueryEngine(engine, settings=CHAIN_SETTINGS.with_changes(budget=4)).query(
            "Who was Henry Roth?"
        )
    )
    assert response.response == "text text"
    info = attribution_info(response)
    assert info["status"] == "error"
    assert info["error"].startswith("ScorerUnavailableError: pass proxy=camab_rag.default_scorer()")
    assert "OpenAICompletionsScorer" in info["error"]  # the other fix, second


def test_a_streamed_response_is_attributed_once_consumed(index: Any) -> None:
    engine = index.as_query_engine(llm=MockLLM(max_tokens=2), similarity_top_k=2, streaming=True)
    question = "Who was Henry Roth?"
    top = engine.retrieve(QueryBundle(question))[0].node.get_content()
    scorer = PlantedScorer([top.split(". ")[0]])
    response = CamabQueryEngine(
        engine, scorer, settings=CHAIN_SETTINGS.with_changes(budget=4)
    ).query(question)
    assert isinstance(response, StreamingResponse)
    assert "attribution" not in (response.metadata or {})  # nothing before the stream ends
    assert "".join(response.response_gen) == "text text"  # the tokens, as streamed
    info = wait_for_attribution(response)
    assert info == attribution_info(response)
    assert info["status"] == "ok" and info["response"] == "text text"
    # the LLM call of a stream starts after the query returns, while the stream is read:
    # its prompt is still captured for this query and ablated in place
    assert info["prompt_mode"] == "captured", info.get("prompt_note")
    assert response.response_txt == "text text"
    ranks = [n.node.metadata[ATTRIBUTION_KEY]["rank"] for n in response.source_nodes]
    assert sorted(ranks) == [1, 2]
    assert response.source_nodes[ranks.index(1)].node.get_content() == top


def _streaming_case(index: Any) -> tuple[Any, str, str, PlantedScorer]:
    engine = index.as_query_engine(llm=MockLLM(max_tokens=2), similarity_top_k=2, streaming=True)
    question = "Who was Henry Roth?"
    top = engine.retrieve(QueryBundle(question))[0].node.get_content()
    return engine, question, top, PlantedScorer([top.split(". ")[0]])


def _check_streamed(response: Any, top: str) -> None:
    info = attribution_info(response)
    assert info["status"] == "ok" and info["response"] == "text text"
    assert info["prompt_mode"] == "captured", info.get("prompt_note")
    ranks = [n.node.metadata[ATTRIBUTION_KEY]["rank"] for n in response.source_nodes]
    assert sorted(ranks) == [1, 2]
    assert response.source_nodes[ranks.index(1)].node.get_content() == top


async def test_an_async_streamed_response_is_attributed_once_consumed(index: Any) -> None:
    engine, question, top, scorer = _streaming_case(index)
    response = await CamabQueryEngine(
        engine, scorer, settings=CHAIN_SETTINGS.with_changes(budget=4)
    ).aquery(question)
    assert isinstance(response, AsyncStreamingResponse)
    assert "attribution" not in (response.metadata or {})  # nothing before the stream ends
    tokens = [token async for token in response.async_response_gen()]
    assert "".join(tokens) == "text text"
    await await_attribution(response)
    _check_streamed(response, top)


def test_the_event_handler_attributes_a_stream_once_consumed(index: Any) -> None:
    engine, question, top, scorer = _streaming_case(index)
    handler = CamabEventHandler.attach(
        scorer=scorer, settings=CHAIN_SETTINGS.with_changes(budget=4)
    )
    try:
        response = engine.query(question)
        assert isinstance(response, StreamingResponse)
        assert "".join(response.response_gen) == "text text"
        wait_for_attribution(response)
    finally:
        handler.detach()
    _check_streamed(response, top)
    assert [r["query"] for r in handler.results] == [question]


async def test_the_event_handler_attributes_an_async_stream_once_consumed(index: Any) -> None:
    engine, question, top, scorer = _streaming_case(index)
    handler = CamabEventHandler.attach(
        scorer=scorer, settings=CHAIN_SETTINGS.with_changes(budget=4)
    )
    try:
        response = await engine.aquery(question)
        assert isinstance(response, AsyncStreamingResponse)
        assert "".join([t async for t in response.async_response_gen()]) == "text text"
        await handler.aflush()  # the handler's own flush waits for stream attributions too
    finally:
        handler.detach()
    _check_streamed(response, top)


class _Collect(BaseEventHandler):
    events: list[AttributionProgressEvent] = Field(default_factory=list)

    def handle(self, event: BaseEvent, **kwargs: Any) -> Any:
        if isinstance(event, AttributionProgressEvent):
            self.events.append(event)


def test_progress_goes_to_the_dispatcher_and_the_hook(index: Any) -> None:
    engine = index.as_query_engine(llm=MockLLM(max_tokens=2), similarity_top_k=3)
    collect = _Collect(events=[])
    seen: list[tuple[int, int]] = []
    scorer = PlantedScorer(["Henry Roth"])
    scored: list[int] = []  # requests scored when each progress report came

    def hook(calls: int, total: int) -> None:
        seen.append((calls, total))
        scored.append(len(scorer.prompts))

    dispatcher = get_dispatcher()
    dispatcher.add_event_handler(collect)
    try:
        wrapped = CamabQueryEngine(
            engine,
            scorer,
            settings=CHAIN_SETTINGS.with_changes(budget=6, method="kernelshap"),
            progress=hook,
        )
        response = answered(wrapped.query("Who was Henry Roth?"))
    finally:
        dispatcher.event_handlers = [h for h in dispatcher.event_handlers if h is not collect]
    assert attribution_info(response)["status"] == "ok"
    calls = [e.calls for e in collect.events]
    assert calls == [4, 6] == scored  # every few calls, as they are made, up to the total
    assert {e.total for e in collect.events} == {6}
    assert {e.query for e in collect.events} == {"Who was Henry Roth?"}
    assert collect.events[0].span_id is not None  # inside the query's span
    assert seen == [(e.calls, e.total) for e in collect.events]


def test_refine_mode_falls_back_to_the_template_and_says_so(index: Any) -> None:
    engine = index.as_query_engine(
        llm=MockLLM(max_tokens=3), similarity_top_k=2, response_mode="refine"
    )
    scorer = PlantedScorer(["Henry Roth"])
    response = CamabQueryEngine(
        engine, scorer, settings=CHAIN_SETTINGS.with_changes(budget=4)
    ).query("Who was Henry Roth?")
    info = attribution_info(response)
    assert info["status"] == "ok", info["error"]
    assert info["prompt_mode"] == "template"
    assert "default template" in info["prompt_note"]
    # the template prompt is camab-rag's default (question + kept nodes)
    assert all("Question: Who was Henry Roth?" in p for p in scorer.prompts)


def test_handler_leaves_camab_query_engine_queries_alone(index: Any) -> None:
    engine = index.as_query_engine(llm=MockLLM(max_tokens=3), similarity_top_k=2)
    handler_scorer = PlantedScorer([])
    engine_scorer = PlantedScorer(["Henry Roth"])
    handler = CamabEventHandler.attach(
        scorer=handler_scorer, settings=CHAIN_SETTINGS.with_changes(budget=4)
    )
    try:
        response = CamabQueryEngine(
            engine, engine_scorer, settings=CHAIN_SETTINGS.with_changes(budget=4)
        ).query("Who was Henry Roth?")
    finally:
        handler.detach()
    assert attribution_info(response)["status"] == "ok"
    assert engine_scorer.prompts and not handler_scorer.prompts
    assert handler.results == []


def test_namespace_package_coexists_with_llama_index_core() -> None:
    import importlib
    from pathlib import Path

    core = importlib.import_module("llama_index.core")
    package = importlib.import_module("llama_index.postprocessor.camab")
    assert package.__file__ is not None and core.__file__ is not None
    namespace_root = Path(package.__file__).resolve().parents[2]  # .../llama_index
    assert namespace_root.name == "llama_index"
    assert not (namespace_root / "__init__.py").exists()
    assert not (namespace_root / "postprocessor" / "__init__.py").exists()
    assert Path(core.__file__).resolve().parents[1] != namespace_root  # two portions, one name
    assert package.CamabQueryEngine.__module__ == "llama_index.postprocessor.camab.engines"


def test_sentence_granularity_scores_each_sentence_of_each_node(index: Any) -> None:
    engine = index.as_query_engine(llm=MockLLM(max_tokens=3), similarity_top_k=2)
    question = "Who was Henry Roth?"
    top = engine.retrieve(QueryBundle(question))[0].node.get_content()
    first_sentence = top.split(". ")[0]
    scorer = PlantedScorer([first_sentence])
    camab = CamabQueryEngine(
        engine, scorer, settings=CHAIN_SETTINGS.with_changes(budget=12, granularity="sentence")
    )
    response = camab.query(question)
    info = attribution_info(response)
    assert info["status"] == "ok", info["error"]
    assert info["prompt_mode"] == "captured"
    assert len(info["segments"]) > len(response.source_nodes)
    best = max(response.source_nodes, key=lambda n: n.node.metadata[ATTRIBUTION_KEY]["score"])
    assert best.node.get_content() == top
    segments = best.node.metadata[ATTRIBUTION_KEY]["segments"]
    # the node's text as the LLM saw it: a "title: ..." header, then its sentences
    assert segments[0]["text"].startswith("title: ")
    planted = [s for s in segments if first_sentence in s["text"]]
    assert len(planted) == 1
    assert planted[0]["score"] == max(s["score"] for s in segments)
    assert planted[0]["score"] == pytest.approx(1.0, abs=0.1)


def test_auto_is_the_default_method_of_every_entry_point(index: Any) -> None:
    from llama_index.postprocessor.camab import (
        CamabEventHandler,
        CamabQueryEngine,
    )

    assert AttributionSettings().method == "auto"
    assert CamabEventHandler().settings.method == "auto"
    engine = index.as_query_engine(llm=MockLLM(max_tokens=2))
    assert CamabQueryEngine(engine).settings.method == "auto"


@pytest.mark.parametrize("granularity", ["chunk", "sentence"])
def test_cite_from_the_source_nodes_of_a_response(index: Any, granularity: Any) -> None:
    from llama_index.postprocessor.camab import attribution_of

    import camab_rag

    engine = index.as_query_engine(llm=MockLLM(max_tokens=3), similarity_top_k=2)
    question = "Who was Henry Roth?"
    top = engine.retrieve(QueryBundle(question))[0].node
    first_sentence = top.get_content().split(". ")[0]
    camab = CamabQueryEngine(
        engine,
        PlantedScorer([first_sentence]),
        settings=CHAIN_SETTINGS.with_changes(budget=12, granularity=granularity),
    )
    response = camab.query(question)
    cited = camab_rag.cite(attribution_of(response), response.source_nodes)
    best = cited.source(1)
    assert best.text == top.get_content()  # the node's own text, no metadata header
    assert best.title == top.metadata["title"]
    for highlight in best.highlights:
        assert best.text[highlight.start : highlight.end] == highlight.text


def test_nodes_discarded_by_a_postprocessor_are_not_attributed(index: Any) -> None:
    from llama_index.core.postprocessor import SimilarityPostprocessor
    from llama_index.postprocessor.camab import groundedness_of

    from camab_rag.groundedness import GroundednessFilter

    engine = index.as_query_engine(
        llm=MockLLM(max_tokens=3),
        similarity_top_k=2,
        node_postprocessors=[SimilarityPostprocessor(similarity_cutoff=0.99)],
    )
    camab = CamabQueryEngine(
        engine,
        PlantedScorer([]),
        budget=8,
        groundedness=GroundednessFilter(mode="block", fallback="No supported answer."),
    )
    response = answered(camab.query("Who was Henry Roth?"))
    assert response.source_nodes == []
    info = attribution_info(response)
    assert info["status"] == "no_context"
    assert "none of the 2 retrieved nodes reached the LLM" in info["error"]
    assert info["scores"] == [] and "nodes" not in info
    verdict = groundedness_of(response)
    assert verdict.grounded is False and verdict.blocked
    assert response.response == "No supported answer."


def test_citation_blocks_cite_only_the_supporting_node(index: Any) -> None:
    from llama_index.core.base.llms.types import CitationBlock, TextBlock
    from llama_index.postprocessor.camab import attribution_of, to_citation_blocks

    engine = index.as_query_engine(llm=MockLLM(max_tokens=3), similarity_top_k=3)
    question = "Who was Henry Roth?"
    top = engine.retrieve(QueryBundle(question))[0].node
    first_sentence = top.get_content().split(". ")[0]
    camab = CamabQueryEngine(
        engine, PlantedScorer([first_sentence]), settings=CHAIN_SETTINGS.with_changes(budget=12)
    )
    response = camab.query(question)
    blocks = to_citation_blocks(attribution_of(response), response.source_nodes)
    assert len(blocks) == 1  # three nodes retrieved, one supports the answer
    [block] = blocks
    again = CitationBlock.model_validate(block.model_dump())  # LlamaIndex's own schema
    assert again == block
    assert block.source == top.node_id and block.title == top.metadata["title"]
    assert isinstance(block.cited_content, TextBlock)
    assert block.cited_content.text == top.get_content().strip()
    location = block.additional_location_info
    assert location["node_index"] == 0
    text = answered(response).response
    assert text is not None and text[location["answer_start"] : location["answer_end"]].strip()


def test_the_retry_budget_of_the_engines_own_scorer_is_settable(index: Any) -> None:
    """#26 item 10: with scorer=None the HTTP scorer is built from the engine's LLM, and a
    dead server's retries must still be boundable by the user."""
    from llama_index.llms.openai_like import OpenAILike
    from llama_index.postprocessor.camab import CamabEventHandler

    llm = OpenAILike(model="m", api_base="http://127.0.0.1:9/v1", api_key="x")
    options = {"retry_budget_s": 0.25, "max_retries": 1}
    inner = index.as_query_engine(llm=MockLLM(max_tokens=3))
    engine = CamabQueryEngine(inner, scorer_options=options)
    built = engine._attributor.scorers.get(llm)
    assert built.retry.budget_s == 0.25 and built.retry.max_retries == 1
    handler = CamabEventHandler(scorer_options={"retry_budget_s": 0.0})
    assert handler._attributor.scorers.get(llm).retry.budget_s == 0.0
    assert CamabQueryEngine(inner)._attributor.scorers.get(llm).retry.budget_s == 3.0


def test_an_aquery_whose_loop_ends_before_its_attribution_is_cancelled(
    index: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """Issue 37: on main asyncio.run(engine.aquery(q)) without aflush left
    metadata["attribution"]["status"] == "pending" for ever, even with a healthy scorer."""
    scorer = PlantedScorer(["title:"], delay=0.2)
    engine = index.as_query_engine(llm=SlowMockLLM(max_tokens=3), similarity_top_k=3)
    handler = CamabEventHandler.attach(
        scorer=scorer, settings=CHAIN_SETTINGS.with_changes(budget=8, method="camab")
    )
    try:
        with caplog.at_level("WARNING"):
            response = asyncio.run(engine.aquery("Who was Henry Roth?"))
    finally:
        handler.detach()
    info = response.metadata[ATTRIBUTION_KEY]
    assert info["status"] == "cancelled"
    assert "aflush()" in info["error"]
    assert "was cancelled" in caplog.text and "aflush()" in caplog.text


# ---------------------------------------------------------------------- stream ordering
class GatedScorer(PlantedScorer):
    """The planted scorer, held at its first call until the test opens the gate: an
    attribution that ran inside the token loop could not finish before the loop ends."""

    def __init__(self, planted: Sequence[str], log: list[str]) -> None:
        super().__init__(planted)
        self.log = log
        self.gate = threading.Event()
        self.agate = asyncio.Event()

    def score(self, requests: Sequence[Any]) -> Any:
        self.log.append("scoring")
        if not self.gate.wait(30):  # a safety net: the test opens it
            raise RuntimeError("the gate was never opened")
        return super().score(requests)

    async def ascore(self, requests: Sequence[Any]) -> Any:
        self.log.append("scoring")
        await asyncio.wait_for(self.agate.wait(), 30)
        return super().score(requests)


def test_a_stream_ends_when_its_tokens_end_and_the_attribution_follows(index: Any) -> None:
    engine, question, top, _ = _streaming_case(index)
    log: list[str] = []
    scorer = GatedScorer([top.split(". ")[0]], log)
    response = CamabQueryEngine(
        engine, scorer, settings=CHAIN_SETTINGS.with_changes(budget=4)
    ).query(question)
    assert isinstance(response, StreamingResponse)
    for token in response.response_gen:
        log.append(f"token {token.strip()}")
    log.append("end of stream")
    # the loop ended while the attribution could not have finished (its scorer is held;
    # in the token loop it would have waited for a gate opened only after the loop)
    assert attribution_info(response)["status"] == "pending"
    assert [e for e in log if e != "scoring"] == ["token text", "token text", "end of stream"]
    scorer.gate.set()
    info = wait_for_attribution(response, timeout=60)
    assert info["status"] == "ok" and info["response"] == "text text"
    _check_streamed(response, top)


async def test_an_async_stream_ends_when_its_tokens_end_and_the_attribution_follows(
    index: Any,
) -> None:
    engine, question, top, _ = _streaming_case(index)
    log: list[str] = []
    scorer = GatedScorer([top.split(". ")[0]], log)
    response = await CamabQueryEngine(
        engine, scorer, settings=CHAIN_SETTINGS.with_changes(budget=4)
    ).aquery(question)
    assert isinstance(response, AsyncStreamingResponse)
    async for token in response.async_response_gen():
        log.append(f"token {token.strip()}")
    log.append("end of stream")
    assert attribution_info(response)["status"] == "pending"
    with pytest.raises(AttributionPendingError, match="await await_attribution"):
        wait_for_attribution(response)  # an async stream's job lives in its loop
    scorer.agate.set()
    info = await await_attribution(response)
    assert log[:3] == ["token text", "token text", "end of stream"]
    assert log[3:] and set(log[3:]) == {"scoring"}  # the attribution came after
    assert info["status"] == "ok"
    _check_streamed(response, top)


def test_waiting_before_the_stream_is_read_says_so(index: Any) -> None:
    engine, question, _, scorer = _streaming_case(index)
    response = CamabQueryEngine(
        engine, scorer, settings=CHAIN_SETTINGS.with_changes(budget=4)
    ).query(question)
    with pytest.raises(KeyError, match="read to the end"):
        wait_for_attribution(response)


def test_an_async_stream_whose_loop_ends_first_reads_cancelled(index: Any) -> None:
    """Read to the end, then the loop closes before the attribution ran: the stream's
    attribution says 'cancelled' and how to wait, never 'pending' for ever."""
    engine, question, _, _ = _streaming_case(index)
    scorer = PlantedScorer(["title:"], delay=0.2)

    async def read() -> Any:
        response = await CamabQueryEngine(
            engine, scorer, settings=CHAIN_SETTINGS.with_changes(budget=4)
        ).aquery(question)
        assert isinstance(response, AsyncStreamingResponse)
        assert "".join([t async for t in response.async_response_gen()]) == "text text"
        return response

    response = asyncio.run(read())
    info = response.metadata[ATTRIBUTION_KEY]
    assert info["status"] == "cancelled" and "await_attribution" in info["error"]
    with pytest.raises(AttributionCancelledError, match=r"cancelled.*await_attribution"):
        attribution_of(response)


def test_reading_a_stream_attribution_still_running_says_it_is_pending(index: Any) -> None:
    """A stream read to the end, its attribution not finished: attribution_of says so with
    a typed error (it was KeyError: 'scores'), and reads the result once waited for."""
    engine, question, _, planted = _streaming_case(index)
    scorer = GatedScorer(planted.planted, [])  # its first call waits for the gate
    response = CamabQueryEngine(engine, scorer, budget=4).query(question)
    assert isinstance(response, StreamingResponse)
    assert "".join(response.response_gen) == "text text"
    with pytest.raises(AttributionPendingError, match=r"not finished yet.*wait_for_attribution"):
        attribution_of(response)
    with pytest.raises(AttributionPendingError, match="'pending'"):
        groundedness_of(response)
    scorer.gate.set()
    assert wait_for_attribution(response, timeout=30)["status"] == "ok"
    assert attribution_of(response).top_documents(1) == [0]


def test_the_event_handler_refuses_a_keyword_it_does_not_have() -> None:
    """A keyword the handler does not take (an old ``groundedness=`` or ``budget=``) is an
    error naming it, never silently dropped: a dropped blocking gate would never block."""
    from llama_index.postprocessor.camab import CamabEventHandler

    from camab_rag import GroundednessFilter

    with pytest.raises(TypeError, match=r"CamabEventHandler.*'gate'"):
        CamabEventHandler(gate=GroundednessFilter(mode="block"))  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="'budjet' \\(did you mean 'budget'\\?\\)"):
        CamabEventHandler(budjet=8)  # type: ignore[call-arg]
    assert CamabEventHandler(budget=8).settings.budget == 8  # a knob, as everywhere
