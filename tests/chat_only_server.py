"""A tiny OpenAI-compatible server that chats but returns no prompt log-probabilities.

It stands in for a hosted chat API (OpenAI, Anthropic, Gemini behind an OpenAI-compatible
gateway) on 127.0.0.1: ``/v1/chat/completions`` answers with a scripted reply, and
``/v1/completions`` answers HTTP 404 "This is a chat model and not supported in the
v1/completions endpoint", as OpenAI's API does for chat models. There is no ``/tokenize``.
So a chain can run on it, but the chain's own model cannot score a given text: the
attribution needs a proxy scorer.

    with ChatOnlyServer(lambda messages: "Paris.") as server:
        llm = ChatOpenAI(base_url=server.base_url, model=server.model, api_key="sk-test")
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

Reply = Callable[[Sequence[dict[str, Any]]], str]
CHAT_ONLY_MESSAGE = (
    "This is a chat model and not supported in the v1/completions endpoint. "
    "Did you mean to use v1/chat/completions?"
)


class ChatOnlyServer:
    """Serves chat completions from ``reply(messages)``; records every request it gets.

    With ``api_key`` every request without ``Authorization: Bearer <api_key>`` is answered
    HTTP 401, as a server started with a key does.

    Attributes:
        requests: ``(path, body)`` of each request, in arrival order.
        authorizations: ``(path, Authorization header or None)`` of each request.
    """

    model = "closed-chat-model"

    def __init__(self, reply: Reply, *, api_key: str | None = None) -> None:
        self.reply = reply
        self.api_key = api_key
        self.requests: list[tuple[str, dict[str, Any]]] = []
        self.authorizations: list[tuple[str, str | None]] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def paths(self) -> list[str]:
        return [path for path, _ in self.requests]

    def __enter__(self) -> ChatOnlyServer:
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # quiet
                return

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                body = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:
                server.requests.append((self.path, {}))
                if self.path.rstrip("/") == "/v1/models":
                    self._send(200, {"object": "list", "data": [{"id": server.model}]})
                else:
                    self._send(404, {"error": {"message": f"Not found: {self.path}"}})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                server.requests.append((self.path, body))
                auth = self.headers.get("Authorization")
                server.authorizations.append((self.path, auth))
                if server.api_key is not None and auth != f"Bearer {server.api_key}":
                    self._send(401, {"error": {"message": "Incorrect API key provided"}})
                elif self.path == "/v1/chat/completions":
                    self._send(200, _chat_completion(server.reply(body["messages"]), body))
                elif self.path == "/v1/completions":
                    error = {"message": CHAT_ONLY_MESSAGE, "type": "invalid_request_error"}
                    self._send(404, {"error": error})
                else:
                    self._send(404, {"error": {"message": f"Not found: {self.path}"}})

        return Handler


def _chat_completion(text: str, request: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": request.get("model", ChatOnlyServer.model),
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": "stop",
                "logprobs": None,
            }
        ],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }
