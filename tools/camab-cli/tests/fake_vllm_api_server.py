"""A stand-in for ``vllm.entrypoints.openai.api_server`` (standard library only).

``test_serve_checks.py`` installs it as ``vllm/entrypoints/openai/api_server.py`` in a
fake vLLM environment, so the real ``camab serve`` launches it instead of vLLM. It binds
``--host``/``--port``, answers ``/health``, and answers ``/v1/models`` only with the key in
``VLLM_API_KEY`` when that is set (as vLLM does); it writes its command line and whether it
got a key to ``launched.json`` in its working directory.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--served-model-name", default="model")
    args, _ = parser.parse_known_args()
    key = os.environ.get("VLLM_API_KEY")
    with open("launched.json", "w", encoding="utf-8") as out:
        json.dump({"argv": sys.argv, "key": key}, out)

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            if self.path == "/health":
                self.answer(200, b"")
            elif key and self.headers.get("Authorization") != f"Bearer {key}":
                self.answer(401, b'{"error": "Unauthorized"}')
            else:
                self.answer(200, json.dumps({"data": [{"id": args.served_model_name}]}).encode())

        def answer(self, status: int, body: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = HTTPServer((args.host, args.port), Handler)
    print(f"fake vLLM serving {args.served_model_name}", flush=True)  # into the log
    server.serve_forever()


if __name__ == "__main__":
    main()
