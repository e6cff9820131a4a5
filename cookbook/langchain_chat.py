"""A multi-turn LangChain chat with citations in every turn, fully offline.

    .venv/bin/python cookbook/langchain_chat.py                 # two scripted turns
    .venv/bin/python cookbook/langchain_chat.py --interactive   # your own questions

An LCEL chain with message history (``MessagesPlaceholder``): each turn retrieves
HotpotQA paragraphs with BM25, answers with the embedded SmolLM2 (``CamabChatModel``)
and is attributed by one ``CamabCallbackHandler`` to the paragraphs retrieved *for that
turn*, against the prompt the model received with the history in it.

Setup (once):   scripts/setup.sh test      (or: pip install -e "integrations/langchain-camab[test]")
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from operator import itemgetter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from langchain_camab import CamabCallbackHandler, CamabChatModel
from langchain_core.messages import BaseMessage, HumanMessage
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder
from langchain_core.runnables import RunnablePassthrough
from langchain_rag import DATA, BM25Retriever, format_docs, load_paragraphs

from camab_rag.citations import cite

PROMPT = ChatPromptTemplate.from_messages(
    [
        ("system", "Answer in a few words, using only the context.\n\nContext:\n{context}"),
        MessagesPlaceholder("history"),
        ("human", "{question}"),
    ]
)


def first_questions(path: Path, n: int) -> list[str]:
    """The questions of the first ``n`` HotpotQA rows (their paragraphs are in the corpus)."""
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line)["question"] for _, line in zip(range(n), handle)]


def cited_turn(handler: CamabCallbackHandler, answer: str) -> str:
    """The turn's answer with ``[n]`` citations and the sources they point to."""
    result = handler.last_result
    if result is None or result.status != "ok":
        return f"Answer: {answer}\n  (no attribution: {result.error if result else None})"
    return cite(result, result.documents).to_terminal()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--rows", type=int, default=120, help="HotpotQA rows in the corpus")
    parser.add_argument("--k", type=int, default=4, help="paragraphs retrieved per turn")
    parser.add_argument("--budget", type=int, default=16, help="model calls per turn")
    parser.add_argument("--interactive", action="store_true", help="ask your own questions")
    args = parser.parse_args(argv)

    from camab_rag import default_scorer

    retriever = BM25Retriever(documents=load_paragraphs(args.data, args.rows), k=args.k)
    llm = CamabChatModel(generator=default_scorer(), max_new_tokens=32)
    chain = (
        RunnablePassthrough.assign(context=itemgetter("question") | retriever | format_docs)
        | PROMPT
        | llm
    )
    handler = CamabCallbackHandler(budget=args.budget)  # scorer: the chain's own model
    history: list[BaseMessage] = []
    questions: Iterator[str]
    if args.interactive:
        questions = iter(lambda: input("\nYou: ").strip(), "")
    else:
        questions = iter(first_questions(args.data, 2))
    for question in questions:
        print()  # cited_turn shows the question
        message: Any = chain.invoke(
            {"question": question, "history": history}, {"callbacks": [handler]}
        )
        history += [HumanMessage(question), message]
        print(cited_turn(handler, str(message.content)))


if __name__ == "__main__":
    main()
