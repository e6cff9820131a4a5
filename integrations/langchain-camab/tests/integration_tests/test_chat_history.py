"""A LangChain chat follow-up judged by the embedded SmolLM2: the product is named only in
an earlier turn, which the handler's captured prompt holds (``MessagesPlaceholder``), so
the gate counts the conversation as context and the correct follow-up passes."""

from __future__ import annotations

from operator import itemgetter
from typing import Any

import pytest
from langchain_camab import CamabCallbackHandler
from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder
from langchain_core.retrievers import BaseRetriever

from camab_rag import AttributionResult
from camab_rag.groundedness import GroundednessFilter

pytestmark = pytest.mark.model

DOCS = [
    "All Lumora kettles come with a 2-year warranty. Teapots have a 1-year warranty "
    "against manufacturing defects.",
    "The staff picnic is on Friday.",
]
PROMPT = ChatPromptTemplate.from_messages(
    [
        ("system", "Answer in a few words, using only the context."),
        MessagesPlaceholder("history"),
        ("human", "Context:\n{context}\n\nQuestion: {question}"),
    ]
)


class Shelf(BaseRetriever):
    docs: list[Document]

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        return [Document(d.page_content) for d in self.docs]


def test_a_follow_up_naming_the_product_from_an_earlier_turn_passes(smollm2: Any) -> None:
    answer = "The Glass teapot has a 1-year warranty."
    llm = GenericFakeChatModel(messages=iter([AIMessage(answer)]))
    retriever = Shelf(docs=[Document(text) for text in DOCS])

    def join(docs: list[Document]) -> str:
        return "\n\n".join(d.page_content for d in docs)

    chain = (
        {
            "context": itemgetter("question") | retriever | join,
            "question": itemgetter("question"),
            "history": itemgetter("history"),
        }
        | PROMPT
        | llm
    )
    handler = CamabCallbackHandler(smollm2, budget=4, groundedness=GroundednessFilter())
    history = [HumanMessage("How much is the Glass teapot?"), AIMessage("It costs 29 euros.")]
    message = chain.invoke(
        {"question": "And how long is its warranty?", "history": history},
        {"callbacks": [handler]},
    )
    assert message.content == answer
    result = handler.last_result
    assert isinstance(result, AttributionResult) and result.status == "ok"
    assert result.prompt_mode == "captured"
    verdict = result.groundedness
    assert verdict is not None and verdict.report is not None
    report = verdict.report
    assert report.earlier_turns == 2
    assert verdict.grounded is True, report.score
    assert report.sentences[0].support_from == ("documents", "conversation")
    assert report.unsupported_spans == []
