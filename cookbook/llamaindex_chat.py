"""A multi-turn LlamaIndex chat with citations in every turn, fully offline.

    .venv/bin/python cookbook/llamaindex_chat.py                 # two scripted turns
    .venv/bin/python cookbook/llamaindex_chat.py --interactive   # your own questions

A ``condense_plus_context`` chat engine over the paragraphs of a few HotpotQA questions
(all-MiniLM-L6-v2 embeddings), answering with the embedded SmolLM2 (``CamabLocalLLM``),
wrapped in ``CamabChatEngine``: each turn is attributed to the nodes retrieved for that
turn, against the prompt the LLM received (chat history included), and printed with
``[n]`` citations and its sources.

Needs ``scripts/setup.sh test`` (or
``pip install -e 'integrations/llama-index-postprocessor-camab[local]'``).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from llamaindex_rag import DATA, load_rows  # also sets the offline environment


def cited_turn(response: Any) -> Iterator[str]:
    """The answer with ``[n]`` after each sentence, then the sources it cites."""
    info = (response.metadata or {}).get("attribution", {})
    if info.get("status") != "ok":
        yield f"Answer: {response.response}\n  (no attribution: {info.get('error')})"
        return
    nodes = response.source_nodes
    parts = []
    for statement in info["statements"]:
        totals = [0.0] * len(nodes)
        for segment, score in zip(info["segments"], statement["scores"]):
            totals[segment["doc_index"]] += score
        best = max(range(len(totals)), key=lambda i: totals[i])
        parts.append(statement["text"] + (f" [{best + 1}]" if totals[best] > 0 else ""))
    yield f"Answer: {' '.join(parts) or response.response}"
    yield f"  ({info['n_queries']} model calls, prompt {info['prompt_source']})"
    for i, nws in enumerate(nodes, start=1):
        entry = nws.node.metadata.get("attribution", {})
        yield f"  [{i}] {entry.get('score', 0.0):+.3f}  {nws.node.metadata.get('title')}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--rows", type=int, default=3, help="questions whose paragraphs to index")
    parser.add_argument("--budget", type=int, default=16, help="model calls per turn")
    parser.add_argument("--similarity-top-k", type=int, default=4)
    parser.add_argument("--interactive", action="store_true", help="ask your own questions")
    args = parser.parse_args()

    from llama_index.core import Document, VectorStoreIndex
    from llama_index.postprocessor.camab import CamabChatEngine, CamabLocalLLM, MiniLMEmbedding

    rows = load_rows(args.data, 0, args.rows)
    documents = [
        Document(text="".join(sentences), metadata={"title": title})
        for row in rows
        for title, sentences in row["context"]
    ]
    print(f"Indexing {len(documents)} HotpotQA paragraphs with all-MiniLM-L6-v2 ...")
    index = VectorStoreIndex.from_documents(documents, embed_model=MiniLMEmbedding())
    llm = CamabLocalLLM(max_new_tokens=40)  # embedded SmolLM2; also scores the subsets
    chat = CamabChatEngine(
        index.as_chat_engine(
            chat_mode="condense_plus_context", llm=llm, similarity_top_k=args.similarity_top_k
        ),
        budget=args.budget,
    )
    questions: Iterator[str]
    if args.interactive:
        questions = iter(lambda: input("\nYou: ").strip(), "")
    else:
        questions = iter([rows[0]["question"], rows[1]["question"]])
    for question in questions:
        print(f"\nYou: {question}")
        for line in cited_turn(chat.chat(question)):
            print(line)


if __name__ == "__main__":
    main()
