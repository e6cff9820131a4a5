"""The callback handlers on real LangChain runnables with a fake model and scorer."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any
from uuid import uuid4

import pytest
from langchain_camab import AsyncCamabCallbackHandler, CamabCallbackHandler
from langchain_core.documents import Document
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.messages import AIMessage
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnableLambda, RunnableParallel, RunnablePassthrough
from langchain_core.tracers.run_collector import RunCollectorCallbackHandler
from pydantic import Field

from camab_rag import AttributionResult, AttributionSettings
from camab_rag.errors import AttributionPendingError, InputError
from camab_rag.settings import CHAIN_SETTINGS
from tests.fakes import FailingScorer, KeywordRetriever, KeywordScorer, chat_messages

DOCS = [
    Document("Paris is the capital of France.", metadata={"title": "Paris"}),
    Document("Berlin is the capital of Germany.", metadata={"title": "Berlin"}),
    Document("Madrid is the capital of Spain.", metadata={"title": "Madrid"}),
]
PROMPT = ChatPromptTemplate.from_messages(
    [
        ("system", "Answer from the context."),
        ("human", "Context:\n{context}\n\nQuestion: {question}"),
    ]
)


def _format(docs: list[Document]) -> str:
    return "\n\n".join(d.page_content for d in docs)


def _answers(question: str) -> str:
    for city, country in (("Paris", "France"), ("Berlin", "Germany"), ("Madrid", "Spain")):
        if country in question:
            return f"{city} is the capital of {country}."
    return "I do not know."


class EchoModel(FakeListChatModel):
    """A fake chat model whose answer depends on the question in its prompt."""

    responses: list[str] = Field(default_factory=list)

    def _call(
        self, messages: list[Any], stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> str:
        return _answers(str(messages[-1].content).rsplit("Question:", 1)[-1])


def _chain(llm: Any = None, retriever: Any = None, fmt: Any = _format) -> Any:
    retriever = retriever or KeywordRetriever(documents=DOCS, k=3)
    return (
        {"context": retriever | fmt, "question": RunnablePassthrough()}
        | PROMPT
        | (llm or EchoModel())
        | StrOutputParser()
    )


def test_attribution_lands_on_result_documents_and_message() -> None:
    handler = CamabCallbackHandler(KeywordScorer(), settings=CHAIN_SETTINGS.with_changes(budget=8))
    run_id = uuid4()
    seen: dict[str, Any] = {}
    retriever = KeywordRetriever(documents=DOCS, k=3)

    def keep(docs: list[Document]) -> str:
        seen["docs"] = docs
        return _format(docs)

    llm = EchoModel()
    chain = {"context": retriever | keep, "question": RunnablePassthrough()} | PROMPT | llm
    message = chain.invoke(
        "What is the capital of France?", {"callbacks": [handler], "run_id": run_id}
    )
    assert message.content == "Paris is the capital of France."
    result = handler.results[run_id]
    assert handler.results[str(run_id)] is result is handler.last_result
    assert isinstance(result, AttributionResult)
    assert result.status == "ok" and result.prompt_mode == "captured" and result.prompt_note is None
    assert result.run_id == str(run_id)
    assert result.question == "What is the capital of France?"
    assert result.n_documents == 3 and result.top_documents(1) == [0]
    # the answer message and the very Document objects of the run carry it
    assert isinstance(message, AIMessage)
    data = message.response_metadata["attribution"]
    assert data["status"] == "ok" and data["top_documents"][0] == 0
    assert data["documents"][0]["title"] == "Paris"
    entries = [d.metadata["attribution"] for d in seen["docs"]]
    assert [e["rank"] for e in entries] == [1, 2, 3] or entries[0]["rank"] == 1
    assert entries[0]["supporting_sentences"] == ["Paris is the capital of France."]
    assert {"score", "rank", "supporting_sentences", "status"} <= set(entries[1])


def test_the_handler_takes_the_budget_as_a_keyword() -> None:
    """``CamabCallbackHandler(scorer, budget=12)``: the README's handler, no settings
    import; by chunk, with the chain's deadline, as documented."""
    handler = CamabCallbackHandler(KeywordScorer(), budget=12, groundedness=_flag())
    _chain().invoke("What is the capital of France?", {"callbacks": [handler]})
    result = handler.last_result
    assert result is not None and result.status == "ok"
    assert (result.budget, len(result.segments), result.exact) == (12, 3, True)  # 2**3 <= 12
    assert result.top_documents(1) == [0]
    assert result.groundedness is not None and result.groundedness.grounded is True
    assert handler.settings.deadline_s == CHAIN_SETTINGS.deadline_s


def _flag() -> Any:
    from camab_rag import GroundednessFilter

    return GroundednessFilter(mode="flag")


def test_ablations_cut_documents_out_of_the_real_prompt() -> None:
    scorer = KeywordScorer()
    handler = CamabCallbackHandler(scorer, settings=CHAIN_SETTINGS.with_changes(budget=6))
    _chain().invoke("What is the capital of France?", {"callbacks": [handler]})
    prompts = [chat_messages(call.prompt) for call in scorer.calls]
    assert all(p[0] == {"role": "system", "content": "Answer from the context."} for p in prompts)
    assert any("Paris" not in p[1]["content"] for p in prompts)  # an ablation without doc 0
    assert all(
        p[1]["content"].endswith("Question: What is the capital of France?") for p in prompts
    )


def test_falls_back_to_the_template_and_says_so() -> None:
    handler = CamabCallbackHandler(KeywordScorer(), settings=CHAIN_SETTINGS.with_changes(budget=6))
    shout: RunnableLambda[list[Document], str] = RunnableLambda(
        lambda docs: _format(docs).upper()
    )  # the prompt no longer has the text
    _chain(fmt=shout).invoke("What is the capital of France?", {"callbacks": [handler]})
    result = handler.last_result
    assert result is not None and result.status == "ok"
    assert result.prompt_mode == "template"
    assert "document(s) 0, 1, 2 was not found" in (result.prompt_note or "")


def test_batch_runs_do_not_mix() -> None:
    handler = CamabCallbackHandler(KeywordScorer(), settings=CHAIN_SETTINGS.with_changes(budget=6))
    questions = ["Capital of France?", "Capital of Germany?", "Capital of Spain?"]
    answers = _chain().batch(questions, {"callbacks": [handler], "max_concurrency": 3})
    assert len(handler.results) == 3
    by_question = {r.question: r for r in handler.results.values()}
    assert set(by_question) == set(questions)
    for question, answer in zip(questions, answers):
        result = by_question[question]
        assert result.response == answer
        top = result.segments[result.top_k(1)[0]].text
        assert top.split()[0] == answer.split()[0]  # the doc naming the answer's city


async def test_abatch_runs_do_not_mix_with_the_async_handler() -> None:
    handler = AsyncCamabCallbackHandler(
        KeywordScorer(), settings=CHAIN_SETTINGS.with_changes(budget=6)
    )
    questions = ["Capital of France?", "Capital of Germany?", "Capital of Spain?"]
    answers = await _chain().abatch(questions, {"callbacks": [handler]})
    assert {r.question: r.response for r in handler.results.values()} == dict(
        zip(questions, answers)
    )
    for result in handler.results.values():
        assert result.status == "ok" and result.prompt_mode == "captured"
        top = result.segments[result.top_k(1)[0]].text
        assert top.split()[0] == result.response.split()[0]


async def test_sync_handler_in_an_async_chain() -> None:
    handler = CamabCallbackHandler(KeywordScorer(), settings=CHAIN_SETTINGS.with_changes(budget=6))
    await _chain().abatch(["Capital of France?", "Capital of Spain?"], {"callbacks": [handler]})
    assert sorted(r.response for r in handler.results.values()) == [
        "Madrid is the capital of Spain.",
        "Paris is the capital of France.",
    ]


def test_several_retrievers_in_one_chain() -> None:
    handler = CamabCallbackHandler(KeywordScorer(), settings=CHAIN_SETTINGS.with_changes(budget=10))
    first = KeywordRetriever(documents=DOCS[:2], k=2)
    second = KeywordRetriever(documents=DOCS[1:], k=2)  # Berlin comes back twice
    both = RunnableParallel(a=first, b=second) | RunnableLambda(lambda r: r["a"] + r["b"])
    chain = {"context": both | _format, "question": RunnablePassthrough()} | PROMPT | EchoModel()
    chain.invoke("What is the capital of Spain?", {"callbacks": [handler]})
    result = handler.last_result
    assert result is not None and result.status == "ok"
    assert result.n_documents == 3  # the duplicate is attributed once
    assert result.prompt_mode == "captured"
    assert [s.text for s in result.segments][result.top_k(1)[0]].startswith("Madrid")


def test_a_failing_scorer_never_breaks_the_chain() -> None:
    handler = CamabCallbackHandler(FailingScorer(), settings=CHAIN_SETTINGS.with_changes(budget=6))
    answer = _chain().invoke("What is the capital of France?", {"callbacks": [handler]})
    assert answer == "Paris is the capital of France."
    result = handler.last_result
    assert result is not None and result.status == "error"
    assert result.error == "RuntimeError: scorer is down"


def test_strict_mode_raises_into_the_chain() -> None:
    handler = CamabCallbackHandler(
        FailingScorer(), settings=CHAIN_SETTINGS.with_changes(budget=6), strict=True
    )
    with pytest.raises(RuntimeError, match="scorer is down"):
        _chain().invoke("What is the capital of France?", {"callbacks": [handler]})


def test_no_scorer_and_an_unscorable_model_gives_a_clear_error() -> None:
    handler = CamabCallbackHandler(settings=CHAIN_SETTINGS.with_changes(budget=6))
    answer = _chain().invoke("What is the capital of France?", {"callbacks": [handler]})
    assert answer.startswith("Paris")
    result = handler.last_result
    assert result is not None and result.status == "error"
    assert "not an OpenAI-compatible chat model" in (result.error or "")
    assert "scorer=" in (result.error or "")


def test_attribution_is_reported_in_the_root_run_metadata() -> None:
    handler = CamabCallbackHandler(KeywordScorer(), settings=CHAIN_SETTINGS.with_changes(budget=6))
    collector = RunCollectorCallbackHandler()
    _chain().invoke("What is the capital of France?", {"callbacks": [handler, collector]})
    root = next(run for run in collector.traced_runs if run.parent_run_id is None)
    reported = root.extra["metadata"]["camab_attribution"]
    assert reported["status"] == "ok" and reported["top_documents"][0] == 0


def test_chain_without_retriever_uses_input_documents() -> None:
    handler = CamabCallbackHandler(KeywordScorer(), settings=CHAIN_SETTINGS.with_changes(budget=6))
    chain = (
        RunnablePassthrough.assign(context=lambda x: _format(x["context"])) | PROMPT | EchoModel()
    )
    chain.invoke({"question": "Capital of Germany?", "context": DOCS}, {"callbacks": [handler]})
    result = handler.last_result
    assert result is not None and result.status == "ok" and result.n_documents == 3
    assert result.top_documents(1) == [1]


def test_background_mode_returns_at_once_and_fills_later() -> None:
    handler = CamabCallbackHandler(
        KeywordScorer(), settings=CHAIN_SETTINGS.with_changes(budget=6), background=True
    )
    run_id = uuid4()
    chain = {"context": KeywordRetriever(documents=DOCS), "question": RunnablePassthrough()}
    docs_holder: dict[str, Any] = {}

    def keep(x: dict[str, Any]) -> dict[str, Any]:
        docs_holder["docs"] = x["context"]
        return {"context": _format(x["context"]), "question": x["question"]}

    message = (chain | RunnableLambda(keep) | PROMPT | EchoModel()).invoke(
        "Capital of France?", {"callbacks": [handler], "run_id": run_id}
    )
    placeholder = message.response_metadata["attribution"]
    result = handler.wait(run_id, timeout=30)
    handler.close()
    assert result.status == "ok" and handler.results[run_id] is result
    assert placeholder["status"] == "ok"  # the same dict, filled in place
    assert docs_holder["docs"][0].metadata["attribution"]["rank"] == 1


def test_wait_gives_the_stored_result_of_a_run_whose_job_was_forgotten() -> None:
    handler = CamabCallbackHandler(
        KeywordScorer(), settings=CHAIN_SETTINGS.with_changes(budget=6), background=True
    )
    handler.runs.keep = 1  # keep one finished job, as a long-running server keeps 1000
    first, second = uuid4(), uuid4()
    for run_id, question in ((first, "Capital of France?"), (second, "Capital of Spain?")):
        _chain().invoke(question, {"callbacks": [handler], "run_id": run_id})
        handler.wait(run_id, timeout=30)
    handler.close()
    assert list(handler.runs.pending) == [second]  # the first job is no longer kept
    assert handler.pending == {}  # what is not finished
    result = handler.wait(first)
    assert result is handler.results[first] and result.response.startswith("Paris")
    with pytest.raises(InputError, match="no attribution under"):
        handler.wait(uuid4())  # a run it never saw


class HeldScorer(KeywordScorer):
    """A KeywordScorer whose calls wait until ``go`` is set."""

    def __init__(self) -> None:
        super().__init__()
        self.go = threading.Event()

    def score(self, requests: Any) -> Any:
        assert self.go.wait(30)
        return super().score(requests)


def test_reading_a_background_result_still_running_says_so() -> None:
    """Issue 49 (review 16): ``results[run_id]`` was a bare KeyError and ``last_result``
    silently the run before."""
    scorer = HeldScorer()
    handler = CamabCallbackHandler(scorer, budget=4, background=True)
    first, second = uuid4(), uuid4()
    scorer.go.set()
    _chain().invoke("Capital of France?", {"callbacks": [handler], "run_id": first})
    handler.wait(first, timeout=30)
    scorer.go.clear()
    _chain().invoke("Capital of Spain?", {"callbacks": [handler], "run_id": second})
    with pytest.raises(AttributionPendingError, match="still being attributed"):
        handler.results[second]
    with pytest.raises(AttributionPendingError, match="latest run"):
        _ = handler.last_result
    assert list(handler.pending) == [second]
    assert handler.results[first].response.startswith("Paris")
    with pytest.raises(KeyError) as error:  # a run it never saw: a plain KeyError
        handler.results[uuid4()]
    assert not isinstance(error.value, AttributionPendingError)
    scorer.go.set()
    result = handler.wait(second, timeout=30)
    handler.close()
    assert handler.results[second] is result is handler.last_result
    assert handler.pending == {} and len(handler.results) == 2


async def test_async_background_mode() -> None:
    handler = AsyncCamabCallbackHandler(
        KeywordScorer(), settings=CHAIN_SETTINGS.with_changes(budget=6), background=True
    )
    await _chain().ainvoke("Capital of Spain?", {"callbacks": [handler]})
    result = await asyncio.wait_for(handler.wait(), 30)
    assert result.status == "ok" and result.response.startswith("Madrid")


def test_no_scorer_uses_the_chains_in_process_model() -> None:
    from langchain_camab import CamabChatModel

    from tests.unit_tests.test_scorer import Generator

    generator = Generator()
    handler = CamabCallbackHandler(settings=CHAIN_SETTINGS.with_changes(budget=6))
    answer = _chain(llm=CamabChatModel(generator=generator)).invoke(
        "What is the capital of France?", {"callbacks": [handler]}
    )
    assert answer == "Paris."
    result = handler.last_result
    assert result is not None and result.status == "ok", result
    assert len(generator.calls) == result.n_queries > 0


def test_async_handler_in_a_sync_chain() -> None:
    handler = AsyncCamabCallbackHandler(
        KeywordScorer(), settings=CHAIN_SETTINGS.with_changes(budget=6)
    )
    answers = _chain().batch(
        ["Capital of France?", "Capital of Germany?"], {"callbacks": [handler]}
    )
    assert sorted(r.response for r in handler.results.values()) == sorted(answers)
    assert all(r.status == "ok" for r in handler.results.values())


def test_auto_is_the_default_method_of_every_entry_point() -> None:
    from langchain_camab import CamabAttributor

    assert AttributionSettings().method == "auto"
    entries = (
        CamabCallbackHandler(),
        AsyncCamabCallbackHandler(),
        CamabAttributor(KeywordScorer()),
    )
    for entry in entries:
        assert entry.settings.method == "auto"


def _run_keeping_documents(
    handler: Any, documents: list[Document], fmt: Any = _format
) -> tuple[Any, list[Document], Any]:
    """Invoke the France question; (answer message, the Documents the run retrieved,
    the handler's result)."""
    seen: dict[str, Any] = {}

    def keep(docs: list[Document]) -> str:
        seen["docs"] = docs
        return str(fmt(docs))

    retriever = KeywordRetriever(documents=documents, k=3)
    chain = {"context": retriever | keep, "question": RunnablePassthrough()} | PROMPT | EchoModel()
    message = chain.invoke("What is the capital of France?", {"callbacks": [handler]})
    return message, seen["docs"], handler.last_result


def test_cite_from_the_langchain_documents_of_the_run() -> None:
    import camab_rag

    def titled(docs: list[Document]) -> str:  # the prompt numbers the documents
        return "\n\n".join(f"Source {i + 1}: {d.page_content}" for i, d in enumerate(docs))

    handler = CamabCallbackHandler(
        KeywordScorer(), settings=CHAIN_SETTINGS.with_changes(budget=8, granularity="sentence")
    )
    _, docs, result = _run_keeping_documents(handler, DOCS, titled)
    assert result is not None and result.status == "ok", result and result.error
    cited = camab_rag.cite(result, docs)
    best = cited.source(1)
    assert best.title == "Paris" and best.text == "Paris is the capital of France."
    assert [h.text for h in best.highlights] == ["Paris is the capital of France."]


def test_empty_retrieval_says_so_and_is_never_grounded() -> None:
    from camab_rag.groundedness import GroundednessFilter

    handler = CamabCallbackHandler(
        KeywordScorer(),
        budget=8,
        groundedness=GroundednessFilter(mode="flag"),
    )
    empty = KeywordRetriever(documents=DOCS, k=3)
    answer = _chain(retriever=empty).invoke("Zzzz qqqq?", {"callbacks": [handler]})
    assert answer == "I do not know."  # the chain's answer is untouched
    result = handler.last_result
    assert result is not None and result.status == "no_context"
    assert result.error is not None and "retriever ran and returned no documents" in result.error
    assert result.n_documents == 0 and result.scores.size == 0
    assert result.groundedness is not None and result.groundedness.grounded is False


def test_native_citations_cite_only_the_supporting_document() -> None:
    from langchain_camab import to_citations, with_citations

    handler = CamabCallbackHandler(
        KeywordScorer(), settings=CHAIN_SETTINGS.with_changes(budget=8, granularity="sentence")
    )
    sourced = [
        Document(d.page_content, metadata={**d.metadata, "source": f"https://x.test/{i}"})
        for i, d in enumerate(DOCS)
    ]
    message, docs, result = _run_keeping_documents(handler, sourced)
    assert result is not None and result.status == "ok"
    citations = to_citations(result, docs)
    assert len(citations) == 1  # three documents retrieved, one supports the answer
    [citation] = citations
    assert citation["type"] == "citation" and citation["id"].startswith("lc_")
    assert citation["title"] == "Paris" and citation["url"] == "https://x.test/0"
    answer = "Paris is the capital of France."
    assert answer[citation["start_index"] : citation["end_index"]] == answer
    assert citation["cited_text"] == "Paris is the capital of France."
    annotated = with_citations(message, citations)
    [block] = annotated.content_blocks  # LangChain's own parser reads the annotations
    assert block["type"] == "text" and block["text"] == answer
    assert block["annotations"][0]["cited_text"] == citation["cited_text"]


def test_citations_option_puts_the_annotations_on_the_answer() -> None:
    handler = CamabCallbackHandler(
        KeywordScorer(), settings=CHAIN_SETTINGS.with_changes(budget=8), citations=True
    )
    message = _chain().invoke("What is the capital of France?", {"callbacks": [handler]})
    assert message == "Paris is the capital of France."  # a string answer: left alone
    retriever = KeywordRetriever(documents=DOCS, k=3)
    chain = (
        {"context": retriever | _format, "question": RunnablePassthrough()} | PROMPT | EchoModel()
    )
    answer = chain.invoke("What is the capital of France?", {"callbacks": [handler]})
    [block] = answer.content_blocks
    assert block["type"] == "text" and block["text"] == "Paris is the capital of France."
    [citation] = block["annotations"]
    assert citation["type"] == "citation" and citation["title"] == "Paris"
    assert answer.response_metadata["attribution"]["status"] == "ok"


class SlowScorer(KeywordScorer):
    """An in-process model that takes 0.2 s per batch."""

    def score(self, requests: Any) -> Any:
        time.sleep(0.2)
        return super().score(requests)


def test_past_its_deadline_the_attribution_stops_and_the_chain_goes_on() -> None:
    """Issue 37: an attribution is bounded by deadline_s (default 120 s in the handlers),
    checked between batches of an in-process model; the chain's answer is untouched."""
    assert CamabCallbackHandler().settings.deadline_s == 120.0
    scorer = SlowScorer()
    # 7 of the 8 subsets of 3 documents: one Thompson draw per batch, 1.4 s in all
    handler = CamabCallbackHandler(
        scorer, settings=CHAIN_SETTINGS.with_changes(budget=7, method="camab", deadline_s=0.5)
    )
    assert handler.settings.deadline_s == 0.5 and handler.settings.method == "camab"
    answer = _chain().invoke("What is the capital of France?", config={"callbacks": [handler]})
    assert answer == "Paris is the capital of France."
    result = handler.last_result
    assert result is not None and result.status == "error"
    assert "deadline of 0.5 s (deadline_s)" in (result.error or "")
    assert 0 < len(scorer.calls) < 7  # stopped between batches, before the budget


def test_an_async_background_run_whose_loop_ends_first_is_cancelled(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Issue 37: never "pending" for ever. asyncio.run returns before the attribution is
    awaited: its placeholders say "cancelled" and how to wait, and a warning is logged."""
    handler = AsyncCamabCallbackHandler(
        SlowScorer(),
        settings=CHAIN_SETTINGS.with_changes(budget=7, method="camab"),
        background=True,
    )
    retrieve = {"context": KeywordRetriever(documents=DOCS) | _format}
    chain = {**retrieve, "question": RunnablePassthrough()} | PROMPT | EchoModel()
    with caplog.at_level("WARNING"):
        message = asyncio.run(chain.ainvoke("Capital of Spain?", {"callbacks": [handler]}))
    placeholder = message.response_metadata["attribution"]
    assert placeholder["status"] == "cancelled"
    assert "await_result()" in placeholder["error"]
    assert "cancelled" in caplog.text and "await_result()" in caplog.text


def test_a_scorer_that_cannot_score_is_refused_when_the_handler_is_built() -> None:
    with pytest.raises(InputError, match=r"scorer must have a score\(requests\) method"):
        CamabCallbackHandler(object())
