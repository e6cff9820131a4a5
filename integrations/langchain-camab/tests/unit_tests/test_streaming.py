"""Streaming through CamabAttributor, its progress events, and the ``(document, score)``
view, on real LangChain runnables with a fake streaming chat model and scorer."""

from __future__ import annotations

from typing import Any

from langchain_camab import CamabAttributor, CamabCallbackHandler
from langchain_camab.native import PROGRESS_EVENT
from langchain_core.documents import Document
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, AIMessageChunk
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnablePassthrough

from camab_rag.groundedness import GroundednessFilter
from camab_rag.settings import CHAIN_SETTINGS
from tests.fakes import KeywordRetriever, KeywordScorer

DOCS = [
    Document("Paris is the capital of France.", metadata={"title": "Paris"}),
    Document("Berlin is the capital of Germany.", metadata={"title": "Berlin"}),
    Document("The Louvre is a museum in the capital.", metadata={"title": "Louvre"}),
]
PROMPT = ChatPromptTemplate.from_messages(
    [("system", "Use the context."), ("human", "Context:\n{context}\n\nQuestion: {input}")]
)
ANSWER = "Paris is the capital of France."
QUESTION = {"input": "What is the capital city of France?"}


def _format(docs: list[Document]) -> str:
    return "\n\n".join(d.page_content for d in docs)


def _model() -> GenericFakeChatModel:
    """Streams the answer word by word, as a real chat model does."""
    return GenericFakeChatModel(messages=iter([AIMessage(ANSWER)]))


def _rag() -> Any:
    """create_retrieval_chain's shape, with a streaming answer step."""
    retriever = KeywordRetriever(documents=DOCS, k=3)
    answer = RunnablePassthrough.assign(context=lambda x: _format(x["context"])) | PROMPT | _model()
    return RunnablePassthrough.assign(context=lambda x: retriever.invoke(x["input"])).assign(
        answer=answer
    )


def _check_stream(chunks: list[Any]) -> None:
    answer_chunks = [c["answer"] for c in chunks[:-1] if "answer" in c]
    assert len(answer_chunks) >= 4  # the answer streamed through, token by token
    assert all("attribution" not in c for c in chunks[:-1])
    last = chunks[-1]
    data = last["attribution"]
    assert data["status"] == "ok" and data["top_documents"][0] == 0
    assert data["n_queries"] == 8
    merged = answer_chunks[0]
    for chunk in [*answer_chunks[1:], last["answer"]]:
        merged = merged + chunk
    assert isinstance(merged, AIMessageChunk) and merged.content == ANSWER
    assert merged.response_metadata["attribution"] == data  # the answer carries it
    docs = next(c["context"] for c in chunks if "context" in c)
    assert [d.metadata["attribution"]["rank"] for d in docs] == [1, 2, 3]  # annotated in place


def test_stream_passes_the_answer_through_then_adds_the_attribution() -> None:
    attributor = CamabAttributor(KeywordScorer(), settings=CHAIN_SETTINGS.with_changes(budget=8))
    _check_stream(list((_rag() | attributor).stream(QUESTION)))
    assert attributor.last_result is not None and attributor.last_result.status == "ok"


async def test_astream_passes_the_answer_through_then_adds_the_attribution() -> None:
    chain = _rag() | CamabAttributor(
        KeywordScorer(), settings=CHAIN_SETTINGS.with_changes(budget=8)
    )
    _check_stream([chunk async for chunk in chain.astream(QUESTION)])


def test_a_blocking_filter_holds_the_stream_until_judged() -> None:
    # every answer blocked: a score no answer reaches, read strictly (block_on="any")
    gate = GroundednessFilter(
        mode="block", threshold=1e9, fallback="Not supported.", block_on="any"
    )
    chain = _rag() | CamabAttributor(KeywordScorer(), budget=8, groundedness=gate)
    chunks = list(chain.stream(QUESTION))
    assert len(chunks) == 1  # nothing was shown before the verdict
    assert chunks[0]["answer"].content == "Not supported."
    assert chunks[0]["attribution"]["groundedness"]["blocked"] is True


def test_progress_reaches_the_hook_and_the_runs_callbacks() -> None:
    seen: list[tuple[int, int]] = []
    attributor = CamabAttributor(
        KeywordScorer(),
        settings=CHAIN_SETTINGS.with_changes(budget=8),
        progress=lambda calls, budget: seen.append((calls, budget)),
    )
    out = (_rag() | attributor).invoke(QUESTION)
    assert out["attribution"]["status"] == "ok"
    assert seen and seen[-1] == (8, 8)
    assert [calls for calls, _ in seen] == sorted(calls for calls, _ in seen)


async def test_progress_events_show_in_astream_events() -> None:
    chain = _rag() | CamabAttributor(
        KeywordScorer(), settings=CHAIN_SETTINGS.with_changes(budget=8)
    )
    events = [
        e
        async for e in chain.astream_events(QUESTION, version="v2")
        if e["event"] == "on_custom_event" and e["name"] == PROGRESS_EVENT
    ]
    assert events, "no progress event was dispatched"
    assert events[-1]["data"]["calls"] == 8 and events[-1]["data"]["total"] == 8
    assert events[-1]["data"]["run_id"] is not None


def test_results_by_run_id_and_scored_documents() -> None:
    attributor = CamabAttributor(KeywordScorer(), settings=CHAIN_SETTINGS.with_changes(budget=8))
    out = (_rag() | attributor).invoke(QUESTION)
    run_id = out["attribution"]["run_id"]
    result = attributor.results[run_id]
    assert result is attributor.last_result
    pairs = result.scored_documents()
    assert [doc.metadata["title"] for doc, _ in pairs] == ["Paris", "Berlin", "Louvre"]
    assert pairs[0][1] > pairs[1][1]


def test_handler_scored_documents_when_format_docs_consumed_them() -> None:
    """The tutorial chain: the documents are formatted into the prompt on the way."""
    retriever = KeywordRetriever(documents=DOCS, k=3)
    handler = CamabCallbackHandler(KeywordScorer(), settings=CHAIN_SETTINGS.with_changes(budget=8))
    chain = (
        {"context": retriever | _format, "input": RunnablePassthrough()}
        | PROMPT
        | _model()
        | StrOutputParser()
    )
    text = "".join(chain.stream(QUESTION["input"], {"callbacks": [handler]}))
    assert text == ANSWER
    assert handler.last_result is not None
    pairs = handler.last_result.scored_documents()
    assert len(pairs) == 3 and all(isinstance(doc, Document) for doc, _ in pairs)
    assert pairs[0][0].page_content == DOCS[0].page_content


FOUR = [*DOCS, Document("Rome is the capital of Italy.", metadata={"title": "Rome"})]


def _four_document_rag() -> Any:
    """The same chain over 4 retrieved documents (every one holds the question's words)."""
    retriever = KeywordRetriever(documents=FOUR, k=4)
    answer = RunnablePassthrough.assign(context=lambda x: _format(x["context"])) | PROMPT | _model()
    return RunnablePassthrough.assign(context=lambda x: retriever.invoke(x["input"])).assign(
        answer=answer
    )


EVERY_SUBSET = [(4, 16), (8, 16), (12, 16), (16, 16)]


async def test_progress_moves_while_the_attribution_runs() -> None:
    """4 documents, budget 40: every subset, 16 calls. The events say so from the first
    one, come every 4 calls as they are made (not once at the end), and end at 16/16."""
    scorer = KeywordScorer()
    at_hook: list[tuple[int, int, int]] = []
    attributor = CamabAttributor(
        scorer,
        settings=CHAIN_SETTINGS.with_changes(budget=40),
        progress=lambda c, t: at_hook.append((c, t, len(scorer.calls))),
    )
    events = [
        e["data"]
        async for e in (_four_document_rag() | attributor).astream_events(QUESTION, version="v2")
        if e["event"] == "on_custom_event" and e["name"] == PROGRESS_EVENT
    ]
    assert [(d["calls"], d["total"]) for d in events] == EVERY_SUBSET
    assert [(c, t) for c, t, _ in at_hook] == EVERY_SUBSET
    assert all(calls == scored for calls, _, scored in at_hook)  # sent as the calls happen


def test_the_callback_handlers_progress_moves_too() -> None:
    scorer = KeywordScorer()
    seen: list[tuple[int, int, int]] = []
    handler = CamabCallbackHandler(
        scorer,
        settings=CHAIN_SETTINGS.with_changes(budget=40),
        progress=lambda c, t: seen.append((c, t, len(scorer.calls))),
    )
    _four_document_rag().invoke(QUESTION, config={"callbacks": [handler]})
    assert handler.last_result is not None and handler.last_result.n_documents == 4
    assert [(c, t) for c, t, _ in seen] == EVERY_SUBSET
    assert all(calls == scored for calls, _, scored in seen)
