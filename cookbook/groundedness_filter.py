"""Filter ungrounded answers in a small RAG pipeline (retrieve -> generate -> attribute -> gate).

A tiny keyword retriever picks paragraphs, the embedded SmolLM2 answers from them, CAMAB
attributes the answer, and :class:`camab_rag.groundedness.GroundednessFilter` blocks
answers that the retrieved context does not explain (``mode="block"``) or only flags them
(``mode="flag"``). The second question has no evidence in the index at all, the way a
retriever miss looks in production: whatever the model answers comes from its own memory,
so the context barely raises the answer's likelihood and the gate blocks it.

The score measures whether the answer *came from* the retrieved text. An answer copied
from an irrelevant passage still counts as grounded in it: the gate catches answers from
the model's memory, not answers to a different question (BENCHMARKS.md has the figures).

    .venv/bin/python cookbook/groundedness_filter.py [--mode flag|block] [--budget 12]
"""

from __future__ import annotations

import argparse
import json
import re
from importlib import resources

import camab_rag
from camab_rag.groundedness import GroundednessFilter


def load_corpus() -> tuple[str, list[dict[str, str]]]:
    text = resources.files("camab_rag.data").joinpath("demo_hotpotqa.json").read_text("utf-8")
    record = json.loads(text)
    return record["question"], record["documents"]


def retrieve(question: str, corpus: list[dict[str, str]], k: int = 3) -> list[dict[str, str]]:
    """Rank paragraphs by shared words with the question (a stand-in for a vector store)."""
    words = set(re.findall(r"\w+", question.lower()))
    ranked = sorted(corpus, key=lambda d: -len(words & set(re.findall(r"\w+", d["text"].lower()))))
    return ranked[:k]


def answer(question: str, documents: list[dict[str, str]], scorer, gate, budget: int) -> None:
    from camab_rag.prompts import TemplatePromptBuilder
    from camab_rag.segments import segment_documents, to_documents

    docs = to_documents(documents)
    segments = segment_documents(docs, "chunk")
    prompt = TemplatePromptBuilder(question, docs, segments).build([True] * len(segments))
    response = scorer.generate([prompt], max_new_tokens=40)[0]
    result = camab_rag.attribute(
        question, documents, response, scorer, budget=budget, granularity="chunk"
    )
    verdict = gate(result, context=documents)
    report = verdict.report
    print(f"Q: {question}")
    print(f"   retrieved: {[d.get('title') for d in documents]}")
    print(f"   model said: {response!r}")
    if report is not None:
        print(
            f"   context gain {report.score:+.3f} ({report.source}), threshold "
            f"{report.threshold:.3f} -> {'grounded' if report.grounded else 'NOT grounded'}"
        )
    print(f"   shown to the user: {verdict.answer!r}\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mode", choices=("flag", "block"), default="block")
    parser.add_argument("--budget", type=int, default=12)
    args = parser.parse_args()

    question, corpus = load_corpus()
    scorer = camab_rag.default_scorer()
    gate = GroundednessFilter(mode=args.mode, scorer=scorer)

    # 1. the evidence is in the index
    answer(question, retrieve(question, corpus), scorer, gate, args.budget)
    # 2. nothing in the index is about the question: the answer can only come from memory
    other = "What is the capital of France?"
    answer(other, retrieve(other, corpus), scorer, gate, args.budget)


if __name__ == "__main__":
    main()
