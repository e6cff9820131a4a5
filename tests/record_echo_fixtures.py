"""Record real vLLM completion responses as JSON fixtures for the echo-parsing unit tests.

    .venv/bin/python tests/record_echo_fixtures.py            # starts its own vLLM server
    .venv/bin/python tests/record_echo_fixtures.py URL MODEL  # uses a running server

Writes ``tests/fixtures/echo/*.json``: each holds the request body sent to
``/v1/completions``, the server's exact JSON answer, and what the scorer must extract.
"""

from __future__ import annotations

import json
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

OUT = Path(__file__).resolve().parent / "fixtures" / "echo"

CHAT = [
    {"role": "system", "content": "Answer briefly."},
    {"role": "user", "content": "What is the capital of France?"},
]


def post(root: str, path: str, body: dict[str, Any]) -> Any:
    request = urllib.request.Request(
        root + path, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.loads(response.read())


def record(root: str, model: str) -> None:
    OUT.mkdir(parents=True, exist_ok=True)

    def tokenize(**payload: Any) -> list[int]:
        ids: list[int] = post(root, "/tokenize", {"model": model, **payload})["tokens"]
        return ids

    cases: list[tuple[str, str, dict[str, Any], dict[str, Any]]] = []
    # 1. Text mode: prompt + response as text; an emoji spans two tokens.
    prompt, response = "Q: What is the capital of France?\nA:", " Paris é 😀 is the capital."
    cases.append(
        (
            "text_echo",
            "plain text prompt + response, echo=true, logprobs=0, max_tokens=1",
            {"prompt": prompt + response, "echo": True, "logprobs": 0},
            {"prompt_chars": len(prompt), "response": response},
        )
    )
    # 2. Text mode where the response's first token merges with the prompt's last one.
    prompt, response = "The answer is: ", "Paris"
    cases.append(
        (
            "text_echo_merged",
            "the prompt's trailing space and the response's first word form one token",
            {"prompt": prompt + response, "echo": True, "logprobs": 0},
            {"prompt_chars": len(prompt), "response": response},
        )
    )
    # 3. Token-id mode: chat template rendered by the server, response tokenized alone.
    response = "The capital of France is Paris."
    prompt_ids = tokenize(messages=CHAT, add_generation_prompt=True, add_special_tokens=False)
    response_ids = tokenize(prompt=response, add_special_tokens=False)
    cases.append(
        (
            "ids_echo_chat",
            "chat prompt as token ids from /tokenize + response ids, echo=true",
            {"prompt": prompt_ids + response_ids, "echo": True, "logprobs": 0},
            {
                "prompt_ids": len(prompt_ids),
                "response_ids": len(response_ids),
                "response": response,
            },
        )
    )
    for name, description, body, expect in cases:
        request = {"model": model, "max_tokens": 1, "temperature": 0.0, **body}
        answer = post(root, "/v1/completions", request)
        fixture = {
            "description": description,
            "server": answer.get("system_fingerprint"),
            "request": request,
            "response": answer,
            "expect": expect,
        }
        path = OUT / f"{name}.json"
        path.write_text(json.dumps(fixture, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"wrote {path}")
    record_refusals(root, model)


def record_refusals(root: str, model: str) -> None:
    """The server's HTTP 400 answers to prompts longer than its context (or filling it)."""
    version = json.loads(urllib.request.urlopen(root + "/version", timeout=60).read())["version"]
    cases = []
    for name, prompt in [
        ("ids_over_limit", "[7] * 2100"),
        ("text_over_limit", "'word ' * 2100"),
        ("ids_at_limit", "[7] * 2048"),
    ]:
        body = {"model": model, "prompt": eval(prompt), "max_tokens": 1, "temperature": 0.0}
        try:
            post(root, "/v1/completions", {**body, "echo": True, "logprobs": 0})
            raise AssertionError(f"{name}: the server accepted it")
        except urllib.error.HTTPError as refusal:
            reply = {"status": refusal.code, "body": json.loads(refusal.read())}
        cases.append({"name": name, "prompt": prompt, **reply})
    fixture = {
        "recorded_from": f"vLLM {version} serving {model} (max_model_len 2048), POST "
        "/v1/completions with echo=true, logprobs=0, max_tokens=1",
        "cases": cases,
    }
    path = OUT / "context_too_long.json"
    path.write_text(json.dumps(fixture, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {path}")


def main() -> None:
    if len(sys.argv) == 3:
        record(sys.argv[1].removesuffix("/v1"), sys.argv[2])
        return
    from vllm_server import VLLMServer, smollm2_dir

    with VLLMServer(smollm2_dir()) as server:
        record(server.root_url, server.name)


if __name__ == "__main__":
    main()
