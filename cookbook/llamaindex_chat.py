"""A multi-turn LlamaIndex chat with citations in every turn, fully offline.

    .venv/bin/python cookbook/llamaindex_chat.py                 # two scripted turns
    .venv/bin/python cookbook/llamaindex_chat.py --interactive   # your own questions

A ``condense_plus_context`` chat engine over the paragraphs of a few HotpotQA questions
(all-MiniLM-L6-v2 embeddings), answering with the embedded SmolLM2 (``CamabLocalLLM``),
wrapped in ``CamabChatEngine``: each turn is attributed to the nodes retrieved for that
turn, against the prompt the LLM received (chat history included), and printed with
``[n]`` citations and its sources.

Needs ``scripts/setup.sh test`` (or
``pip install -e integrations/llama-index-postprocessor-camab -e
integrations/llama-index-llms-camab -e integrations/llama-index-embeddings-camab``).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from llamaindex_rag import DATA, load_rows  # also sets the offline environment


def cited_turn(response: Any) -> str:
    """The turn's answer with ``[n]`` citations and the sources they point to."""
    from llama_index.postprocessor.camab import attribution_of

    from camab_rag.citations import cite

    result = attribution_of(response)
    if result.status != "ok":
        return f"Answer: {response.response}\n  (no attribution: {result.error})"
    return cite(result, response.source_nodes).to_terminal()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--rows", type=int, default=3, help="questions whose paragraphs to index")
    parser.add_argument("--budget", type=int, default=16, help="model calls per turn")
    parser.add_argument("--similarity-top-k", type=int, default=4)
    parser.add_argument("--interactive", action="store_true", help="ask your own questions")
    args = parser.parse_args()

    from llama_index.core import Document, VectorStoreIndex
    from llama_index.embeddings.camab import MiniLMEmbedding
    from llama_index.llms.camab import CamabLocalLLM
    from llama_index.postprocessor.camab import CamabChatEngine

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
        print()  # cited_turn shows the question
        print(cited_turn(chat.chat(question)))


if __name__ == "__main__":
    main()
