"""CamabAttributor as a LangGraph node, and the handler on a LangGraph graph."""

from __future__ import annotations

from typing import Any, TypedDict

import pytest
from langchain_camab import CamabAttributor, CamabCallbackHandler
from langchain_core.documents import Document
from langchain_core.language_models.fake_chat_models import FakeListChatModel

from camab_rag.settings import CHAIN_SETTINGS
from tests.fakes import KeywordRetriever, KeywordScorer

langgraph = pytest.importorskip("langgraph.graph")

DOCS = [
    Document("Paris is the capital of France.", metadata={"title": "Paris"}),
    Document("Berlin is the capital of Germany.", metadata={"title": "Berlin"}),
]


class State(TypedDict, total=False):
    question: str
    context: list[Document]
    answer: str
    attribution: dict[str, Any]


def _graph(attributor: CamabAttributor | None) -> Any:
    retriever = KeywordRetriever(documents=DOCS, k=2)
    graph = langgraph.StateGraph(State)
    graph.add_node("retrieve", lambda s: {"context": retriever.invoke(s["question"])})
    llm = FakeListChatModel(responses=["Paris is the capital of France."] * 10)

    def generate(state: State) -> dict[str, Any]:
        context = "\n\n".join(d.page_content for d in state["context"])
        message = llm.invoke(f"Context:\n{context}\n\nQuestion: {state['question']}")
        return {"answer": message.content}

    graph.add_node("generate", generate)
    graph.add_edge(langgraph.START, "retrieve")
    graph.add_edge("retrieve", "generate")
    if attributor is None:
        graph.add_edge("generate", langgraph.END)
    else:
        graph.add_node("attribute", attributor)
        graph.add_edge("generate", "attribute")
        graph.add_edge("attribute", langgraph.END)
    return graph.compile()


def test_attributor_as_a_graph_node() -> None:
    out = _graph(
        CamabAttributor(KeywordScorer(), settings=CHAIN_SETTINGS.with_changes(budget=6))
    ).invoke({"question": "What is the capital of France?"})
    assert out["answer"] == "Paris is the capital of France."
    assert out["attribution"]["status"] == "ok"
    assert out["attribution"]["top_documents"][0] == 0
    assert out["context"][0].metadata["attribution"]["rank"] == 1


def test_handler_on_a_graph_uses_the_state_documents() -> None:
    handler = CamabCallbackHandler(KeywordScorer(), settings=CHAIN_SETTINGS.with_changes(budget=6))
    _graph(None).invoke({"question": "What is the capital of France?"}, {"callbacks": [handler]})
    result = handler.last_result
    assert result is not None
    assert result.status == "ok", result.error
    assert result.prompt_mode == "captured" and result.n_documents == 2
    assert result.question == "What is the capital of France?"
    assert result.top_documents(1) == [0]
