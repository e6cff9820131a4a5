"""A streaming RAG chat in the terminal: the answer streams as it is generated, then its
citations arrive in the stream's last chunk (LangChain ``chain.stream`` + CamabAttributor).

The corpus is HotpotQA paragraphs behind a BM25 retriever. By default the chat model is the
embedded SmolLM2 (offline); ``--base-url`` streams from an OpenAI-compatible server instead
(vLLM, llama.cpp...), and attribution is scored by that same server and model.

Setup (once):   scripts/setup.sh test      (or: pip install -e "integrations/langchain-camab[test]")
Run:            .venv/bin/python cookbook/streaming_chat.py                    # ask away
                .venv/bin/python cookbook/streaming_chat.py --question "..."   # one turn
                .venv/bin/python cookbook/streaming_chat.py --base-url URL --model NAME
                (URL: an OpenAI-compatible server, e.g. http://127.0.0.1:8000/v1)
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

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

from camab_rag.citations import cite


def chat_model(args: argparse.Namespace) -> Any:
    if args.base_url:
        from langchain_openai import ChatOpenAI

        return ChatOpenAI(
            base_url=args.base_url,
            model=args.model,
            api_key=os.environ.get("OPENAI_API_KEY", "EMPTY"),  # type: ignore[arg-type]
            max_tokens=args.max_tokens,
            temperature=0.0,
        )
    from camab_rag import default_scorer

    return CamabChatModel(generator=default_scorer(), max_new_tokens=args.max_tokens)


def build_chain(retriever: BM25Retriever, llm: Any, budget: int) -> tuple[Any, CamabAttributor]:
    """{"question"} -> {"question", "context", "answer"}, then the attribution step."""
    answer = RunnableLambda(lambda x: {**x, "context": format_docs(x["context"])}) | PROMPT | llm

    shown: list[int] = []  # progress lines shown for the current answer

    def progress(calls: int, total: int) -> None:
        start = "\r" if shown else "\n"  # the first one starts below the streamed answer
        shown.append(calls)
        print(f"{start}  attributing: {calls}/{total} model calls", end="", file=sys.stderr)
        if calls >= total:
            shown.clear()

    attributor = CamabAttributor(
        llm=llm,
        budget=budget,
        prompt=PROMPT,
        progress=progress,
    )
    retrieve = RunnablePassthrough.assign(context=lambda x: retriever.invoke(x["question"]))
    return retrieve.assign(answer=answer) | attributor, attributor


def stream_turn(chain: Any, attributor: CamabAttributor, question: str) -> str:
    """Print the answer as it streams; return it cited once the last chunk has come."""
    print("Streaming: ", end="", flush=True)
    attribution: dict[str, Any] | None = None
    for chunk in chain.stream({"question": question}):
        if "answer" in chunk:
            print(chunk["answer"].content, end="", flush=True)
        attribution = chunk.get("attribution", attribution)
    print(file=sys.stderr)
    result = attributor.last_result  # the full result behind the last chunk's summary
    if attribution is None or result is None or result.status != "ok":
        return f"(no attribution: {attribution and attribution['error']})"
    return cite(result, result.documents).to_terminal()


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--question", help="ask one question and exit")
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--rows", type=int, default=120, help="HotpotQA rows in the corpus")
    parser.add_argument("--k", type=int, default=4, help="paragraphs retrieved")
    parser.add_argument("--budget", type=int, default=16, help="model calls for attribution")
    parser.add_argument("--max-tokens", type=int, default=32)
    parser.add_argument("--base-url", help="an OpenAI-compatible server to stream from")
    parser.add_argument("--model", default="smollm2", help="the server's model name")
    args = parser.parse_args(argv)

    retriever = BM25Retriever(documents=load_paragraphs(args.data, args.rows), k=args.k)
    chain, attributor = build_chain(retriever, chat_model(args), args.budget)
    questions = [args.question] if args.question else None
    if questions is None:
        print(f"Ask about the corpus (empty line to quit), e.g.: {DEFAULT_QUESTION}")
    while True:
        question = questions.pop() if questions else (None if questions == [] else input("> "))
        if not question or not question.strip():
            return
        print(stream_turn(chain, attributor, question.strip()))
        if questions == []:
            return


if __name__ == "__main__":
    main()
