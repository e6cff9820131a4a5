"""A server on 127.0.0.1 that refuses every completion and echoes the credentials it got.

Issue 50: a password that needs percent-encoding in a base URL (``svc:pa%40ss%2Fw0rd@``)
reaches the server decoded (``svc:pa@ss/w0rd``, sent as an ``Authorization: Basic`` token),
and a server that echoes what it received showed it in clear. This endpoint tokenizes (a
vLLM-style ``/tokenize``: any text is two tokens) and answers each ``/v1/completions`` with
``status`` and a body naming the decoded ``user:password``, the password alone and
the bare Basic token, so a test can search every output for those forms. ``URLS`` holds the
credential forms under test: a password that needs encoding, and a token given as the user.
"""

from __future__ import annotations

import base64
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

URLS = {
    "encoded password": "svc:pa%40ss%2Fw0rd",
    "token as the user": "tok%2Fen-9c1d",
}
"""The user-info of each base URL under test (as written in the URL)."""

SHOWN_FORMS = {
    "encoded password": ["pa@ss/w0rd", "pa%40ss%2Fw0rd", "svc:pa@ss/w0rd"],
    "token as the user": ["tok/en-9c1d", "tok%2Fen-9c1d"],
}
"""What must never be shown for each: the raw and decoded forms (the Basic token, which
the server computes from what it got, is added by :meth:`CredentialEcho.forms`)."""


class CredentialEcho:
    """Answers every completion with ``status`` and a JSON error echoing the credentials it
    got; ``received`` holds each request's decoded ``user:password``."""

    def __init__(self, status: int = 500) -> None:
        self.status = status
        self.received: list[str] = []
        self.tokens: list[str] = []
        echo = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                header = self.headers.get("Authorization") or ""
                token = header.split()[-1] if header.startswith("Basic ") else ""
                decoded = base64.b64decode(token).decode() if token else ""
                echo.received.append(decoded)
                echo.tokens.append(token)
                if self.path.split("?")[0].endswith("/tokenize"):
                    self.reply(200, b'{"tokens": [7, 8]}')
                    return
                password = decoded.partition(":")[2]
                message = (
                    f"rejected credentials {decoded} (password {password!r}, token {token}, "
                    f"header {header})"
                )
                self.reply(echo.status, json.dumps({"error": {"message": message}}).encode())

            def reply(self, status: int, body: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()

    def url(self, userinfo: str) -> str:
        """This server's base URL with ``userinfo`` (as written) before the host."""
        return f"http://{userinfo}@127.0.0.1:{self._httpd.server_address[1]}/v1"

    def forms(self, case: str) -> list[str]:
        """Every form of case ``case``'s credentials that must never be shown, the Basic
        tokens this server received included."""
        return [*SHOWN_FORMS[case], *{t for t in self.tokens if t}]

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(5)

    def __enter__(self) -> CredentialEcho:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
