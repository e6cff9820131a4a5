"""Filter ungrounded answers in a LangChain RAG chain (offline, embedded model).

The chain of ``cookbook/langchain_rag.py`` -- HotpotQA paragraphs, a BM25 retriever, a chat
prompt and the embedded SmolLM2 as the chat model -- ends with one more step:
``CamabAttributor(groundedness=GroundednessFilter(mode="block"))``. It attributes the
answer to the retrieved paragraphs with the chain's own model and, when the gate's
calibrated verdict is ``unsupported`` (the paragraphs neither hold nor explain the
answer's informative words, and by the default rule, ``block_on="facts"``, a name, number
or date of it is unchecked), replaces it by a fallback; ``--mode flag`` keeps the answer and
only attaches the verdict.

The second question has no evidence in the corpus, the way a retriever miss looks in
production: whatever the model answers comes from its own memory, so the retrieved text
barely raises the answer's likelihood and the gate blocks it. The score measures whether
the answer *came from* the retrieved text: an answer copied from an irrelevant passage
still counts as grounded in it (BENCHMARKS.md, "Groundedness score calibration").

Setup (once):   scripts/setup.sh test
Run:            .venv/bin/python cookbook/groundedness_filter.py [--mode flag|block]
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from langchain_camab import CamabAttributor, CamabChatModel
from langchain_core.runnables import RunnableLambda, RunnablePassthrough
from langchain_rag import (
    DATA,
    DEFAULT_QUESTION,
    PROMPT,
    BM25Retriever,
    format_docs,
    load_paragraphs,
)

from camab_rag import default_scorer
from camab_rag.groundedness import GroundednessFilter

OUT_OF_CORPUS = "What is the capital of Australia?"
FALLBACK = "The retrieved documents do not support an answer, so I will not guess."


def build_chain(retriever: Any, llm: Any, gate: GroundednessFilter, budget: int) -> Any:
    """retrieve -> prompt -> model -> attribute and judge (one LCEL chain)."""
    answer = RunnableLambda(lambda x: {**x, "context": format_docs(x["context"])}) | PROMPT | llm
    return RunnablePassthrough.assign(context=lambda x: retriever.invoke(x["question"])).assign(
        answer=answer
    ) | CamabAttributor(
        llm=llm,
        budget=budget,
        groundedness=gate,
        prompt=PROMPT,
    )


def show(question: str, out: dict[str, Any]) -> None:
    verdict = out["attribution"]["groundedness"]
    report = verdict["report"]
    print(f"Q: {question}")
    print(f"   retrieved: {[d.metadata['title'] for d in out['context']]}")
    print(f"   model said: {verdict['original_answer']!r}")
    if report is not None:
        decided = (
            f"P(unsupported) {report['p_unsupported']:.2f}, blocked from "
            f"{report['calibration']['block_at']:.2f}"
            if report.get("decided_by") == "calibration"
            else f"threshold {report['threshold']:.2f}"
        )
        print(
            f"   support {report['score']:+.3f} (explained share, {report['source']}), "
            f"{decided} -> {'grounded' if verdict['grounded'] else 'NOT grounded'}"
        )
    else:
        print(f"   groundedness unknown: {verdict['error']}")
    print(f"   shown to the user: {out['answer'].content!r}\n")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--mode", choices=("flag", "block"), default="block")
    parser.add_argument("--budget", type=int, default=12, help="model calls for attribution")
    parser.add_argument("--rows", type=int, default=120, help="HotpotQA rows in the corpus")
    parser.add_argument("--data", type=Path, default=DATA)
    args = parser.parse_args(argv)

    retriever = BM25Retriever(documents=load_paragraphs(args.data, args.rows), k=4)
    llm = CamabChatModel(generator=default_scorer(), max_new_tokens=24)
    gate = GroundednessFilter(mode=args.mode, fallback=FALLBACK)
    chain = build_chain(retriever, llm, gate, args.budget)
    for question in (DEFAULT_QUESTION, OUT_OF_CORPUS):
        show(question, chain.invoke({"question": question}))


if __name__ == "__main__":
    main()
