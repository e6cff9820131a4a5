"""Which retrieved paragraphs did a LangChain RAG answer come from? (offline, embedded model)

A complete LangChain RAG chain -- HotpotQA paragraphs, a BM25 retriever, a chat prompt
template and the embedded SmolLM2 model as the chat model -- plus one callback handler
that attributes the answer to the retrieved paragraphs, scored by the same model against
the exact prompt it received. Prints the answer with its citations.

Setup (once):   scripts/setup.sh test      (or: pip install -e "integrations/langchain-camab[test]")
Run:            .venv/bin/python cookbook/langchain_rag.py
                .venv/bin/python cookbook/langchain_rag.py --question "..." --budget 24
                .venv/bin/python cookbook/langchain_rag.py --step   (CamabAttributor instead)
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from langchain_camab import CamabAttributor, CamabCallbackHandler, CamabChatModel
from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import RunnableLambda, RunnablePassthrough
from pydantic import ConfigDict, PrivateAttr

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "data" / "hotpotqa_dev_sample.jsonl"  # 120 bundled rows (data/README.md)
DEFAULT_QUESTION = (
    "What is the name of the Isles who were led by Aonghus Mór and covered a total land "
    "area of over 8300 km2?"
)

PROMPT = ChatPromptTemplate.from_messages(
    [
        ("system", "Answer the question in a few words, using only the context."),
        ("human", "Context:\n{context}\n\nQuestion: {question}"),
    ]
)


def load_paragraphs(path: Path, n_rows: int) -> list[Document]:
    """Every paragraph of the first ``n_rows`` HotpotQA rows, one Document each."""
    if not path.exists():
        sys.exit(f"HotpotQA data not found at {path}: pass --data")
    docs: list[Document] = []
    with path.open(encoding="utf-8") as handle:
        for _, line in zip(range(n_rows), handle):
            for title, sentences in json.loads(line)["context"]:
                docs.append(Document("".join(sentences).strip(), metadata={"title": title}))
    return docs


def _tokens(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())


class BM25Retriever(BaseRetriever):
    """BM25 over title + text (rank_bm25)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    documents: list[Document]
    k: int = 4
    _index: Any = PrivateAttr(default=None)

    def model_post_init(self, context: Any, /) -> None:
        super().model_post_init(context)
        try:
            from rank_bm25 import BM25Okapi
        except ImportError:
            sys.exit("this example needs rank-bm25: pip install rank-bm25")
        self._index = BM25Okapi(
            [_tokens(f"{d.metadata['title']} {d.page_content}") for d in self.documents]
        )

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        scores = self._index.get_scores(_tokens(query))
        best = sorted(range(len(scores)), key=lambda i: -scores[i])[: self.k]
        return [
            Document(self.documents[i].page_content, metadata=dict(self.documents[i].metadata))
            for i in best
        ]


def format_docs(docs: Sequence[Document]) -> str:
    return "\n\n".join(d.page_content for d in docs)


def print_report(
    question: str, answer: str, docs: Sequence[Document], data: dict[str, Any]
) -> None:
    print(f"Question: {question}")
    if data["status"] != "ok":
        print(f"Answer:   {answer}")
        print(f"(attribution failed: {data['error']})")
        return
    # number the sources by attribution rank and cite them after each answer sentence
    order = data["top_documents"]
    number = {doc_index: n + 1 for n, doc_index in enumerate(order)}
    cited = []
    for citation in data["citations"]:
        mark = f" [{number[citation['document']]}]" if citation["document"] is not None else ""
        cited.append(citation["sentence"] + mark)
    print(f"Answer:   {' '.join(cited) if cited else answer}")
    print(
        f"\nSources (method {data['method']}, {data['n_queries']} model calls, "
        f"prompt {data['prompt_mode']}, {data['wall_time_s']:.1f} s):"
    )
    for doc_index in order:
        doc = docs[doc_index]
        entry = doc.metadata["attribution"]
        text = doc.page_content if len(doc.page_content) <= 90 else doc.page_content[:87] + "..."
        print(f"  [{number[doc_index]}] {entry['score']:+.3f}  {doc.metadata['title']}: {text}")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--question", default=DEFAULT_QUESTION)
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument(
        "--rows", type=int, default=120, help="HotpotQA rows whose paragraphs form the corpus"
    )
    parser.add_argument("--k", type=int, default=4, help="paragraphs retrieved")
    parser.add_argument("--budget", type=int, default=16, help="model calls for attribution")
    parser.add_argument("--step", action="store_true", help="use CamabAttributor, not the callback")
    args = parser.parse_args(argv)

    from camab_rag import default_scorer

    retriever = BM25Retriever(documents=load_paragraphs(args.data, args.rows), k=args.k)
    llm = CamabChatModel(generator=default_scorer(), max_new_tokens=24)

    if args.step:
        # a chain returning {"question", "context": [Document], "answer"} + one more step;
        # given the chain's prompt template, the step ablates the real prompt too
        answer = (
            RunnableLambda(lambda x: {**x, "context": format_docs(x["context"])}) | PROMPT | llm
        )
        chain = RunnablePassthrough.assign(
            context=lambda x: retriever.invoke(x["question"])
        ).assign(answer=answer) | CamabAttributor(llm=llm, budget=args.budget, prompt=PROMPT)
        out = chain.invoke({"question": args.question})
        print_report(args.question, str(out["answer"].content), out["context"], out["attribution"])
        return

    # the textbook LCEL chain; the handler scores with the chain's own model (scorer=None)
    retrieved: list[Document] = []
    chain = (
        {
            "context": retriever | RunnableLambda(lambda d: retrieved.extend(d) or format_docs(d)),
            "question": RunnablePassthrough(),
        }
        | PROMPT
        | llm
    )
    handler = CamabCallbackHandler(budget=args.budget, granularity="chunk")
    message = chain.invoke(args.question, config={"callbacks": [handler]})
    print_report(
        args.question, str(message.content), retrieved, message.response_metadata["attribution"]
    )


if __name__ == "__main__":
    main()
