"""Chat and agents with the callback handler: a conversation with message history, and a
LangGraph agent whose retrieval is a tool. Real LangChain / LangGraph objects, HotpotQA
paragraphs behind BM25, a scripted chat model (so each answer is fixed) and the embedded
SmolLM2 scoring. Each turn's answer comes from a different paragraph, and each turn cites
its own."""

from __future__ import annotations

import re
import warnings
from collections.abc import Sequence
from operator import itemgetter
from typing import Any

import pytest
from langchain_camab import CamabCallbackHandler
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.chat_history import InMemoryChatMessageHistory
from langchain_core.documents import Document
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder
from langchain_core.runnables import RunnablePassthrough
from langchain_core.runnables.history import RunnableWithMessageHistory
from langchain_core.tools import tool
from pydantic import Field

from camab_rag.settings import CHAIN_SETTINGS
from tests.integration_tests.hotpot import BM25Retriever, format_docs, load_rows

pytestmark = pytest.mark.model
K = 2  # paragraphs retrieved per turn: the answer's own and another
BUDGET = 2**K  # every subset once


class ScriptedChat(BaseChatModel):
    """Answers the last human message with its scripted answer; when the script says so,
    first calls the ``search`` tool with the question (an agent's retrieval)."""

    script: dict[str, str]
    use_tool: bool = False
    prompts: list[list[BaseMessage]] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedChat:
        return self

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.prompts.append(list(messages))
        question = next(str(m.content) for m in reversed(messages) if m.type == "human")
        answered = isinstance(messages[-1], ToolMessage)
        if self.use_tool and not answered:
            call_id = f"call-{len(self.prompts)}"
            call = {"name": "search", "args": {"query": question}, "id": call_id}
            message = AIMessage("", tool_calls=[call])
        else:
            message = AIMessage(self.script[question])
        return ChatResult(generations=[ChatGeneration(message=message)])


@pytest.fixture()
def retriever3(retriever: BM25Retriever) -> BM25Retriever:
    return BM25Retriever(documents=retriever.documents, k=K)


def _turns(retriever: BM25Retriever) -> list[tuple[str, str, str]]:
    """Two (question, answer copied from one paragraph, its title), from two HotpotQA rows,
    whose paragraph the retriever finds."""
    turns = []
    for row in load_rows(2):
        title, _ = row["supporting_facts"][0]
        sentences = dict((t, s) for t, s in row["context"])[title]
        question = f"What do we know about {title}?"
        found = [d.metadata["title"] for d in retriever.invoke(question)]
        assert title in found, f"BM25 did not retrieve {title!r} for {question!r}: {found}"
        turns.append((question, sentences[0].strip(), title))
    assert turns[0][2] != turns[1][2]
    return turns


def _top_title(handler: CamabCallbackHandler) -> str:
    result = handler.last_result
    assert result is not None and result.status == "ok", result and result.error
    document, _ = result.scored_documents()[0]
    return str(document.metadata["title"])


def test_a_conversation_with_history_cites_each_turn_from_its_own_retrieval(
    retriever3: BM25Retriever, smollm2: Any
) -> None:
    retriever = retriever3
    turns = _turns(retriever)
    llm = ScriptedChat(script={q: a for q, a, _ in turns})
    prompt = ChatPromptTemplate.from_messages(
        [
            ("system", "Answer from the context.\n\n{context}"),
            MessagesPlaceholder("history"),
            ("human", "{question}"),
        ]
    )
    chain = (
        RunnablePassthrough.assign(context=itemgetter("question") | retriever | format_docs)
        | prompt
        | llm
    )
    histories: dict[str, InMemoryChatMessageHistory] = {}
    chat = RunnableWithMessageHistory(
        chain,
        lambda session: histories.setdefault(session, InMemoryChatMessageHistory()),
        input_messages_key="question",
        history_messages_key="history",
    )
    handler = CamabCallbackHandler(smollm2, settings=CHAIN_SETTINGS.with_changes(budget=BUDGET))
    config: Any = {"callbacks": [handler], "configurable": {"session_id": "s1"}}
    for turn, (question, answer, title) in enumerate(turns):
        message = chat.invoke({"question": question}, config)
        assert message.content == answer
        result = handler.last_result
        assert result is not None and result.status == "ok", result and result.error
        assert result.prompt_mode == "captured", result.prompt_note  # history included
        assert result.question == question and result.response == answer
        assert result.n_queries == BUDGET and result.n_documents == K
        assert _top_title(handler) == title
        assert len(llm.prompts[-1]) == 2 + 2 * turn  # system, history, question
    assert len(handler.results) == 2
    assert len(histories["s1"].messages) == 4


def _agent(llm: ScriptedChat, search: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # create_react_agent: moved to langchain.agents
        from langgraph.prebuilt import create_react_agent

        return create_react_agent(llm, [search])


@pytest.mark.parametrize("returns", ["text", "artifact"])
def test_an_agent_attributes_what_its_retrieval_tool_returned(
    returns: str, retriever3: BM25Retriever, smollm2: Any
) -> None:
    """The tool's output is the context: the documents its retriever returned (``text``:
    the tool formats them), or the ``Document`` artifact of a content-and-artifact tool
    that calls no retriever run (``artifact``)."""
    pytest.importorskip("langgraph.prebuilt")
    retriever = retriever3
    corpus = retriever.documents

    @tool
    def search(query: str) -> str:
        """Search the encyclopedia."""
        return format_docs(retriever.invoke(query))

    @tool(response_format="content_and_artifact")
    def search_artifact(query: str) -> tuple[str, list[Document]]:
        """Search the encyclopedia."""
        words = set(re.findall(r"\w+", query.lower()))
        hits = [d for d in corpus if words & set(re.findall(r"\w+", d.metadata["title"].lower()))]
        docs = [Document(d.page_content, metadata=dict(d.metadata)) for d in hits[:K]]
        return format_docs(docs), docs

    search_artifact.name = "search"
    turns = _turns(retriever)
    llm = ScriptedChat(script={q: a for q, a, _ in turns}, use_tool=True)
    agent = _agent(llm, search if returns == "text" else search_artifact)
    handler = CamabCallbackHandler(smollm2, settings=CHAIN_SETTINGS.with_changes(budget=BUDGET))
    for question, answer, title in turns:
        out = agent.invoke({"messages": [HumanMessage(question)]}, {"callbacks": [handler]})
        assert out["messages"][-1].content == answer
        result = handler.last_result
        assert result is not None and result.status == "ok", result and result.error
        assert result.prompt_mode == "captured", result.prompt_note
        assert result.question == question and result.response == answer
        assert 2 <= result.n_documents <= K
        assert _top_title(handler) == title
        assert out["messages"][-1].response_metadata["attribution"]["status"] == "ok"
