"""A minimal chat page with citations: ask a question, get the answer with [n] markers and
the supporting passages highlighted.

Standard library only (``http.server``), no JavaScript: the page is a plain HTML form and
each answer is rendered by :meth:`camab_rag.citations.CitedAnswer.to_html`, which escapes
everything that came from the documents or the model. Serves on 127.0.0.1 only.

    .venv/bin/python cookbook/chat_citations.py                  # http://127.0.0.1:8765/
    .venv/bin/python cookbook/chat_citations.py --once "Who ...?" --out answer.html
"""

from __future__ import annotations

import argparse
import html
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import camab_rag
from camab_rag.citations import CitedAnswer, cite
from camab_rag.groundedness import assess_groundedness
from camab_rag.prompts import TemplatePromptBuilder
from camab_rag.render.html import CSP
from camab_rag.segments import segment_documents, to_documents

# The answers' own policy, except that the page's form may post back to this server.
CHAT_CSP = CSP.replace("form-action 'none'", "form-action 'self'")


def load_documents() -> tuple[str, list[dict[str, str]]]:
    text = resources.files("camab_rag.data").joinpath("demo_hotpotqa.json").read_text("utf-8")
    record = json.loads(text)
    return record["question"], record["documents"]


class ChatBot:
    """Answers from a fixed document set with the embedded model, then attributes."""

    def __init__(self, documents: list[dict[str, str]], budget: int) -> None:
        self.documents = documents
        self.budget = budget
        self.scorer = camab_rag.default_scorer()
        self.lock = threading.Lock()  # one model, one request at a time

    def ask(self, question: str) -> CitedAnswer:
        docs = to_documents(self.documents)
        segments = segment_documents(docs, "sentence")
        prompt = TemplatePromptBuilder(question, docs, segments).build([True] * len(segments))
        with self.lock:
            response = self.scorer.generate([prompt], max_new_tokens=48)[0]
            result = camab_rag.attribute(
                question, self.documents, response, self.scorer, budget=self.budget
            )
            report = assess_groundedness(result, context=self.documents, scorer=self.scorer)
        return cite(result, self.documents).with_groundedness(report)


def page(history: list[CitedAnswer], suggestion: str) -> str:
    turns = "\n<hr>\n".join(answer.to_html(full_page=False) for answer in history)
    return (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        f"<meta http-equiv='Content-Security-Policy' content=\"{html.escape(CHAT_CSP)}\">"
        "<title>camab chat</title><style>body{margin:2rem;font-family:sans-serif}"
        "form{margin-top:1.5rem}input[type=text]{width:32rem;padding:.4rem}</style></head><body>"
        "<h1>Chat with citations</h1>"
        f"{turns or '<p>Ask something about the documents.</p>'}"
        "<form method='post' action='/'>"
        f"<input type='text' name='q' value='{html.escape(suggestion, quote=True)}'>"
        "<button type='submit'>Ask</button></form></body></html>"
    )


def serve(bot: ChatBot, suggestion: str, port: int) -> None:
    history: list[CitedAnswer] = []

    class Handler(BaseHTTPRequestHandler):
        def _send(self, body: str) -> None:
            data = body.encode("utf-8")
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Security-Policy", CHAT_CSP)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            self._send(page(history, suggestion))

        def do_POST(self) -> None:
            length = min(int(self.headers.get("Content-Length", "0")), 10_000)
            form: dict[str, Any] = parse_qs(self.rfile.read(length).decode("utf-8", "replace"))
            question = (form.get("q") or [""])[0].strip()
            if question:
                history.append(bot.ask(question))
            self._send(page(history, suggestion))

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    print(f"chat page on http://127.0.0.1:{port}/ (Ctrl-C to stop)")
    server.serve_forever()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--once", metavar="QUESTION", help="answer one question and exit")
    parser.add_argument("--out", default="chat_answer.html", help="page written by --once")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--budget", type=int, default=16)
    args = parser.parse_args()
    question, documents = load_documents()
    bot = ChatBot(documents, args.budget)
    if args.once:
        out = Path(args.out)
        if out.exists() and "<title>camab chat</title>" not in out.read_text(errors="replace"):
            parser.error(f"{out} exists and is not a page this script wrote: pass another --out")
        answer = bot.ask(args.once)
        print(answer.to_terminal())
        out.write_text(page([answer], args.once), encoding="utf-8")
        print(f"wrote {out}")
        return
    serve(bot, question, args.port)


if __name__ == "__main__":
    main()
