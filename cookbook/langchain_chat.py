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


def cited_turn(handler: CamabCallbackHandler, answer: str) -> Iterator[str]:
    """The answer with ``[n]`` after each sentence, then the sources it cites."""
    result = handler.last_result
    if result is None or result.status != "ok":
        yield f"Answer: {answer}\n  (no attribution: {result.error if result else None})"
        return
    data = result.to_dict()
    ranked = result.scored_documents()
    number = {id(doc): n + 1 for n, (doc, _) in enumerate(ranked)}
    parts = []
    for statement in data["statements"]:
        totals = [0.0] * len(result.documents)
        for segment, score in zip(data["segments"], statement["scores"]):
            totals[segment["doc_index"]] += score
        best = max(range(len(totals)), key=lambda i: totals[i])
        mark = f" [{number[id(result.documents[best])]}]" if totals[best] > 0 else ""
        parts.append(statement["text"] + mark)
    yield f"Answer: {' '.join(parts) or answer}"
    yield f"  ({result.n_queries} model calls, prompt {result.prompt_mode})"
    for n, (doc, score) in enumerate(ranked, start=1):
        yield f"  [{n}] {score:+.3f}  {doc.metadata['title']}"


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
        print(f"\nYou: {question}")
        message: Any = chain.invoke(
            {"question": question, "history": history}, {"callbacks": [handler]}
        )
        history += [HumanMessage(question), message]
        for line in cited_turn(handler, str(message.content)):
            print(line)


if __name__ == "__main__":
    main()
