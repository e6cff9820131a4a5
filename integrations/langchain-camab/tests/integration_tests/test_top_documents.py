"""Review finding 13: a chain's ``top_documents`` are the sources ``cite()`` shows, by
score (never every retrieved document), on a real LangChain chain scored by SmolLM2."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_camab import CamabCallbackHandler
from langchain_core.documents import Document
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnablePassthrough

from camab_rag import cite
from tests.fakes import KeywordRetriever

pytestmark = pytest.mark.model
CITIES = ["Paris", "Berlin", "Madrid", "Rome", "Vienna", "Lisbon", "Warsaw"]
COUNTRIES = ["France", "Germany", "Spain", "Italy", "Austria", "Portugal", "Poland"]
DOCS = [Document(f"{c} is the capital of {k}.") for c, k in zip(CITIES, COUNTRIES)]
PROMPT = ChatPromptTemplate.from_messages(
    [("human", "Context:\n{context}\n\nQuestion: {question}\nAnswer:")]
)


def test_top_documents_are_the_cited_sources_by_score(smollm2: Any) -> None:
    answer = "Paris is the capital of France."
    handler = CamabCallbackHandler(smollm2, budget=8)
    retriever = KeywordRetriever(documents=DOCS, k=7)
    chain = (
        {
            "context": retriever | (lambda docs: "\n".join(d.page_content for d in docs)),
            "question": RunnablePassthrough(),
        }
        | PROMPT
        | FakeListChatModel(responses=[answer])
    )
    message = chain.invoke("Which city is the capital of France?", {"callbacks": [handler]})
    result = handler.last_result
    assert result is not None and result.status == "ok" and result.n_documents == 7
    data = message.response_metadata["attribution"]
    rank = {d["index"]: d["rank"] for d in data["documents"]}
    shown = [source.doc_index for source in cite(result, result.documents).sources]
    assert data["top_documents"] == sorted(shown, key=rank.__getitem__)
    assert data["top_documents"][0] == 0 and len(data["top_documents"]) < 7
