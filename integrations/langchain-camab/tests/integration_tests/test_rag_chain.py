"""A real LangChain RAG chain: HotpotQA paragraphs, BM25, a prompt template, SmolLM2.

Attribution runs with the embedded model in-process (chunk granularity, small budget).
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain_camab import (
    AsyncCamabCallbackHandler,
    CamabAttributor,
    CamabCallbackHandler,
    CamabChatModel,
)
from langchain_core.documents import Document
from langchain_core.messages import AIMessage
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnableLambda, RunnablePassthrough

from camab_rag.scorers.openai_completions import OpenAICompletionsScorer
from camab_rag.settings import CHAIN_SETTINGS
from tests.integration_tests.hotpot import (
    PROMPT,
    BM25Retriever,
    Example,
    format_docs,
    rag_chain,
)

pytestmark = pytest.mark.model
BUDGET = 12


def _gold_rank(entries: list[dict[str, Any]], titles: list[str], gold: frozenset[str]) -> int:
    """The best rank any gold paragraph got (1 = ranked above every distractor)."""
    return min(int(e["rank"]) for e, t in zip(entries, titles) if t in gold)


def test_handler_attributes_real_answers_to_gold_paragraphs(
    retriever: BM25Retriever, chat_model: CamabChatModel, smollm2: Any, easy_examples: list[Example]
) -> None:
    handler = CamabCallbackHandler(smollm2, settings=CHAIN_SETTINGS.with_changes(budget=BUDGET))
    seen: list[list[Document]] = []

    def keep(docs: list[Document]) -> str:
        seen.append(docs)
        return format_docs(docs)

    chain = (
        {"context": retriever | RunnableLambda(keep), "question": RunnablePassthrough()}
        | PROMPT
        | chat_model
    )
    top_is_gold = 0
    for example in easy_examples:
        message = chain.invoke(example.question, {"callbacks": [handler]})
        docs = seen[-1]
        result = handler.last_result
        assert result is not None
        assert result.status == "ok", result.error
        assert result.prompt_mode == "captured"
        assert result.question == example.question
        assert result.response == message.content
        assert result.n_documents == len(docs) == 4
        assert 0 < result.n_queries <= BUDGET
        # metadata on the answer message and on each retrieved Document
        assert isinstance(message, AIMessage)
        data = message.response_metadata["attribution"]
        assert data["status"] == "ok" and len(data["documents"]) == 4
        entries = [d.metadata["attribution"] for d in docs]
        assert sorted(e["rank"] for e in entries) == [1, 2, 3, 4]
        assert all(isinstance(e["score"], float) for e in entries)
        titles = [d.metadata["title"] for d in docs]
        assert [d["title"] for d in data["documents"]] == titles
        top_is_gold += _gold_rank(entries, titles, example.gold_titles) == 1
    # the answer came from a gold paragraph: it outranks every distractor (measured: 3 of
    # 3, one with a small margin, so one miss is tolerated)
    assert top_is_gold >= 2, f"a gold paragraph ranked first in {top_is_gold}/{len(easy_examples)}"


def test_attributor_step_on_a_retrieval_chain(
    retriever: BM25Retriever, chat_model: CamabChatModel, easy_examples: list[Example]
) -> None:
    """create_retrieval_chain's shape, with the chain's prompt rebuilt for real ablations;
    scorer=None: the attributor scores with the chain's own (in-process) model."""
    prompt = ChatPromptTemplate.from_messages(
        [*PROMPT.messages[:1], ("human", "Context:\n{context}\n\nQuestion: {input}")]
    )

    def prompt_inputs(state: dict[str, Any]) -> dict[str, str]:
        return {"context": format_docs(state["context"]), "input": state["input"]}

    answer = RunnableLambda(prompt_inputs) | prompt | chat_model
    chain = RunnablePassthrough.assign(context=lambda x: retriever.invoke(x["input"])).assign(
        answer=answer
    ) | CamabAttributor(
        settings=CHAIN_SETTINGS.with_changes(budget=BUDGET),
        llm=chat_model,
        prompt=prompt,
    )
    example = easy_examples[0]
    out = chain.invoke({"input": example.question})
    data = out["attribution"]
    assert data["status"] == "ok", data["error"]
    assert data["prompt_mode"] == "captured"
    assert out["answer"].response_metadata["attribution"] is data
    entries = [d.metadata["attribution"] for d in out["context"]]
    titles = [d.metadata["title"] for d in out["context"]]
    assert _gold_rank(entries, titles, example.gold_titles) == 1


async def test_abatch_runs_do_not_mix(
    retriever: BM25Retriever, chat_model: CamabChatModel, smollm2: Any, easy_examples: list[Example]
) -> None:
    handler = AsyncCamabCallbackHandler(smollm2, settings=CHAIN_SETTINGS.with_changes(budget=6))
    questions = [e.question for e in easy_examples[:2]]
    messages = await rag_chain(retriever, chat_model).abatch(questions, {"callbacks": [handler]})
    assert len(handler.results) == 2
    by_question = {r.question: r for r in handler.results.values()}
    for question, message in zip(questions, messages):
        result = by_question[question]
        assert result.status == "ok" and result.response == message.content
        retrieved = [d.page_content for d in retriever.invoke(question)]
        assert [s.text for s in result.segments] == retrieved


def test_a_failing_scorer_leaves_the_answer_unchanged(
    retriever: BM25Retriever, chat_model: CamabChatModel, easy_examples: list[Example]
) -> None:
    # a real HTTP scorer whose server is down (nothing listens on port 9)
    down = OpenAICompletionsScorer("http://127.0.0.1:9/v1", "smollm2", timeout=2, max_retries=0)
    handler = CamabCallbackHandler(down, settings=CHAIN_SETTINGS.with_changes(budget=4))
    chain = rag_chain(retriever, chat_model)
    example = easy_examples[0]  # its model_answer: the same chain's, with no handler
    attributed = chain.invoke(example.question, {"callbacks": [handler]})
    assert attributed.content == example.model_answer
    result = handler.last_result
    assert result is not None and result.status == "error" and result.error
    assert attributed.response_metadata["attribution"]["status"] == "error"
