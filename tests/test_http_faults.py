"""The HTTP scorer against a faulty OpenAI-compatible endpoint on 127.0.0.1.

The endpoint (a small threaded ``http.server`` written here) answers ``/v1/completions``
with a real vLLM response recorded in ``tests/fixtures/echo/text_echo.json`` unless its
script says otherwise: slow answers, 429 with Retry-After, 500, truncated or invalid JSON,
missing log-probs, refusals. Every fault must end in a retry that succeeds or a clear error.
All traffic stays on 127.0.0.1 and every request loop is bounded.
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import threading
import time
import traceback
from collections import deque
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import numpy as np
import pytest
from fakes import KeywordScorer

from camab_rag import AttributionSettings, attribute
from camab_rag.errors import (
    DeadlineExceededError,
    InputError,
    ScorerError,
    ServerRefusedError,
    TransientScorerError,
)
from camab_rag.scorers.base import ScoreRequest
from camab_rag.scorers.openai_completions import OpenAICompletionsScorer
from camab_rag.scorers.proxy import ProxyFallbackScorer
from camab_rag.scorers.transport import NoChatTemplateError, NoPromptLogprobsError, retry_after

FIXTURE_DIR = Path(__file__).resolve().parent / "fixtures" / "echo"
FIXTURE = json.loads((FIXTURE_DIR / "text_echo.json").read_text("utf-8"))
FULL_TEXT: str = FIXTURE["request"]["prompt"]
PROMPT = FULL_TEXT[: FIXTURE["expect"]["prompt_chars"]]
RESPONSE: str = FIXTURE["expect"]["response"]
GOOD = json.dumps(FIXTURE["response"]).encode()
SECRET = "sk-test-DO-NOT-LOG-4f9a2b"


class FaultyServer:
    """A scripted OpenAI-compatible endpoint. ``script`` holds one behaviour per incoming
    completion request; ``default`` applies once the script is used up."""

    def __init__(self) -> None:
        self.script: deque[tuple[Any, ...]] = deque()
        self.default: tuple[Any, ...] = ("ok",)
        self.completions: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.paths: list[str] = []  # each completion request's path and query
        self.tokenize_calls = 0
        self.tokenize: dict[str, list[int]] | None = None  # None: no /tokenize (404)
        self.tokenize_delay = 0.0  # seconds /tokenize waits before it answers
        self.tokenize_reply: tuple[int, dict[str, str]] | None = None  # status and headers
        self.ids_reply: bytes = GOOD  # the answer to a token-id prompt
        self.get_status: int | None = None  # what GET (/v1/models) answers; None: 501
        self.in_flight = 0
        self.max_in_flight = 0
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                if server.get_status is None:
                    self.send_error(501)
                else:
                    self.reply(server.get_status, b'{"detail":"Not Found"}')

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                if urlsplit(self.path).path.endswith("/tokenize"):
                    with server.lock:
                        server.tokenize_calls += 1
                    time.sleep(server.tokenize_delay)
                    if server.tokenize_reply is not None:
                        status, headers = server.tokenize_reply
                        self.reply(status, b'{"error": {"message": "tokenizer down"}}', headers)
                    elif server.tokenize is None:
                        self.reply(404, b'{"detail":"Not Found"}')
                    else:
                        ids = server.tokenize.get(body.get("prompt"), [7])
                        self.reply(200, json.dumps({"tokens": ids}).encode())
                    return
                with server.lock:
                    server.completions.append(body)
                    server.headers.append(dict(self.headers))
                    server.paths.append(self.path)
                    action = server.script.popleft() if server.script else server.default
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                try:
                    self.act(action)
                finally:
                    with server.lock:
                        server.in_flight -= 1

            def act(self, action: tuple[Any, ...]) -> None:
                kind = action[0]
                if kind == "ok":
                    prompt = server.completions[-1]["prompt"]
                    self.reply(200, server.ids_reply if isinstance(prompt, list) else GOOD)
                elif kind in ("sleep_ok", "slow"):  # "slow": longer than the client's timeout
                    time.sleep(action[1])
                    self.reply(200, GOOD)
                elif kind == "status":
                    _, code, headers, payload = action
                    self.reply(code, json.dumps(payload).encode(), headers)
                elif kind == "trickle":  # the whole body, one byte every action[1] seconds
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(GOOD)))
                    self.end_headers()
                    try:
                        for i in range(len(GOOD)):
                            self.wfile.write(GOOD[i : i + 1])
                            self.wfile.flush()
                            time.sleep(action[1])
                    except OSError:  # the client gave up
                        self.close_connection = True
                elif kind == "truncated":  # promises more bytes than it sends, then closes
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(GOOD)))
                    self.send_header("Connection", "close")
                    self.end_headers()
                    self.wfile.write(GOOD[: len(GOOD) // 2])
                    self.wfile.flush()
                    self.close_connection = True
                elif kind in ("miscounted", "positive"):  # a plausible but wrong body
                    body = json.loads(GOOD)
                    if kind == "miscounted":
                        body["usage"]["prompt_tokens"] += 3
                    else:
                        body["choices"][0]["logprobs"]["token_logprobs"][-3] = 0.5
                    self.reply(200, json.dumps(body).encode())
                elif kind == "raw":  # any status with any body
                    self.reply(action[1], action[2])
                elif kind == "invalid_json":  # a complete body that is cut-off JSON
                    self.reply(200, GOOD[: len(GOOD) // 2])
                elif kind == "no_logprobs":
                    body = json.loads(GOOD)
                    body["choices"][0]["logprobs"] = None
                    self.reply(200, json.dumps(body).encode())
                elif kind == "text":
                    payload = {
                        "object": "text_completion",
                        "model": "fake",
                        "choices": [{"index": 0, "text": action[1], "finish_reason": "stop"}],
                        "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5},
                    }
                    self.reply(200, json.dumps(payload).encode())
                else:  # pragma: no cover - a typo in a test's script
                    raise AssertionError(kind)

            def reply(self, code: int, payload: bytes, headers: dict[str, str] | None = None):
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                for key, value in (headers or {}).items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(payload)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server() -> Iterator[FaultyServer]:
    fake = FaultyServer()
    yield fake
    fake.close()


def make_scorer(server: FaultyServer, **options: Any) -> OpenAICompletionsScorer:
    defaults: dict[str, Any] = {"timeout": 5.0, "max_retries": 3, "backoff_base": 0.01}
    return OpenAICompletionsScorer(
        server.base_url, "smollm2", api_key=SECRET, **{**defaults, **options}
    )


REQUEST = ScoreRequest(PROMPT, RESPONSE)


def assert_good(result: Any) -> None:
    assert "".join(result.tokens) == RESPONSE
    lp = FIXTURE["response"]["choices"][0]["logprobs"]["token_logprobs"]
    n = FIXTURE["response"]["usage"]["prompt_tokens"]
    np.testing.assert_allclose(result.logprobs, lp[n - len(result.tokens) : n])


def test_request_shape_and_text_mode_without_tokenize(server: FaultyServer) -> None:
    [result] = make_scorer(server).score([REQUEST])
    assert_good(result)
    assert server.tokenize_calls == 1  # probed once, 404: text mode
    [body] = server.completions
    assert body["prompt"] == PROMPT + RESPONSE
    assert body["echo"] is True and body["logprobs"] == 0
    assert body["max_tokens"] == 1  # never 0: some servers read 0 as unlimited
    assert body["temperature"] == 0.0
    assert server.headers[0]["Authorization"] == f"Bearer {SECRET}"


def test_slow_response_times_out_then_the_retry_succeeds(server: FaultyServer) -> None:
    # The timeout leaves room for a loaded CI machine; the bound only says the 60 s answer
    # was not waited for (a wall-clock speed goal belongs in a benchmark, not a test).
    server.script.append(("slow", 60.0))
    start = time.monotonic()
    [result] = make_scorer(server, timeout=2.0).score([REQUEST])
    assert_good(result)
    assert len(server.completions) == 2
    assert time.monotonic() - start < 30.0


def test_always_slow_ends_in_a_clear_timeout_error(server: FaultyServer) -> None:
    server.default = ("slow", 1.5)
    with pytest.raises(ScorerError, match=r"failed after 2 attempts: request timed out after"):
        make_scorer(server, timeout=0.3, max_retries=1).score([REQUEST])
    assert len(server.completions) == 2


def test_a_silent_server_error_points_to_the_request_timeout(server: FaultyServer) -> None:
    """Review of issue 49: after a silent server the error named the 3 s retry budget but
    not ``timeout=``, the knob that holds each attempt (60 s by default)."""
    server.default = ("slow", 1.5)
    with pytest.raises(TransientScorerError) as raised:
        make_scorer(server, timeout=0.3, max_retries=1).score([REQUEST])
    message = str(raised.value)
    assert "timed out after 0.3 s" in message
    assert "timeout=0.3 s (the scorer's request timeout)" in message
    assert "OpenAICompletionsScorer(timeout=...)" in message
    server.default = ("status", 503, {}, {"error": {"message": "overloaded"}})
    with pytest.raises(TransientScorerError) as raised:
        make_scorer(server, max_retries=1).score([REQUEST])
    assert "timeout=" not in str(raised.value)  # no timeout: the hint would mislead


def test_429_honours_retry_after(server: FaultyServer) -> None:
    server.script.append(("status", 429, {"Retry-After": "1"}, {"error": {"message": "slow down"}}))
    start = time.monotonic()
    [result] = make_scorer(server, backoff_base=0.001).score([REQUEST])
    elapsed = time.monotonic() - start
    assert_good(result)
    assert len(server.completions) == 2
    assert elapsed >= 0.95, f"retried after {elapsed:.2f} s, before Retry-After: 1"


def test_retry_after_is_capped_by_backoff_max(server: FaultyServer) -> None:
    server.script.append(("status", 429, {"Retry-After": "3600"}, {"error": {"message": "x"}}))
    start = time.monotonic()
    [result] = make_scorer(server, backoff_max=0.2).score([REQUEST])
    assert_good(result)
    assert time.monotonic() - start < 60  # the hour asked for was not waited


def test_500_then_success(server: FaultyServer) -> None:
    server.script.extend([("status", 500, {}, {"error": {"message": "boom"}})] * 2)
    [result] = make_scorer(server).score([REQUEST])
    assert_good(result)
    assert len(server.completions) == 3


def test_persistent_503_is_a_clear_error(server: FaultyServer) -> None:
    server.default = ("status", 503, {}, {"error": {"message": "overloaded"}})
    with pytest.raises(ScorerError, match=r"failed after 3 attempts: HTTP 503: overloaded"):
        make_scorer(server, max_retries=2).score([REQUEST])
    assert len(server.completions) == 3


def test_a_501_is_not_retried(server: FaultyServer) -> None:
    """501 Not Implemented: the server will never do it, so it is a final error at once."""
    server.default = ("status", 501, {}, {"error": {"message": "completions not implemented"}})
    with pytest.raises(ScorerError, match=r"HTTP 501 from .*: completions not implemented") as e:
        make_scorer(server, max_retries=2).score([REQUEST])
    assert not isinstance(e.value, TransientScorerError)
    assert len(server.completions) == 1


def test_retries_stop_when_the_retry_budget_is_spent(server: FaultyServer) -> None:
    server.default = ("status", 503, {}, {"error": {"message": "overloaded"}})
    # pauses of 0.5-1 s then 1-2 s: the second would take the waiting past 1.2 s
    scorer = make_scorer(server, max_retries=5, backoff_base=1.0, retry_budget_s=1.2)
    with pytest.raises(ScorerError, match=r"after 2 attempts \(retry budget of 1.2 s spent\)"):
        scorer.score([REQUEST])
    assert len(server.completions) == 2
    server.completions.clear()
    with pytest.raises(ScorerError, match="after 2 attempts"):
        asyncio.run(scorer.ascore([REQUEST]))
    assert len(server.completions) == 2


def test_a_retry_that_times_out_still_names_the_first_failure(server: FaultyServer) -> None:
    """A 500, then a retry that outlasts the timeout: the error keeps the 500 (it used to
    read only "timed out after 0.007 s", the last attempt's sliver of the budget)."""
    server.script.extend([("status", 500, {}, {"error": {"message": "boom"}}), ("slow", 2.0)])
    scorer = make_scorer(server, timeout=0.3, max_retries=1, retry_budget_s=0.5)
    with pytest.raises(ScorerError, match=r"timed out after 0.3 s.*\(first: HTTP 500: boom"):
        scorer.score([REQUEST])
    assert len(server.completions) == 2


def test_a_redirect_is_refused_and_named_not_followed(server: FaultyServer) -> None:
    location = "http://user:hunter22@elsewhere.invalid/v1/completions"
    server.default = ("status", 307, {"Location": location}, {})
    with pytest.raises(ScorerError, match=r"redirected /v1/completions to http://elsewhere") as e:
        make_scorer(server).score([REQUEST])
    assert "HTTP 307" in str(e.value) and "hunter22" not in str(e.value)
    assert len(server.completions) == 1  # not retried, not followed


def test_the_default_retry_budget_suits_a_chat() -> None:
    scorer = OpenAICompletionsScorer("http://127.0.0.1:9/v1", "m")
    assert scorer.retry.budget_s == 3.0
    with pytest.raises(InputError, match="retry_budget_s"):
        OpenAICompletionsScorer("http://127.0.0.1:9/v1", "m", retry_budget_s=-1)


def test_truncated_body_is_retried(server: FaultyServer) -> None:
    server.script.append(("truncated",))
    [result] = make_scorer(server).score([REQUEST])
    assert_good(result)
    assert len(server.completions) == 2


def test_invalid_json_is_retried(server: FaultyServer) -> None:
    server.script.append(("invalid_json",))
    [result] = make_scorer(server).score([REQUEST])
    assert_good(result)
    assert len(server.completions) == 2


def test_always_invalid_json_is_a_clear_error(server: FaultyServer) -> None:
    server.default = ("invalid_json",)
    with pytest.raises(ScorerError, match="malformed response body"):
        make_scorer(server, max_retries=1).score([REQUEST])


def test_missing_logprobs_fails_once_with_an_actionable_error(server: FaultyServer) -> None:
    server.default = ("no_logprobs",)
    scorer = make_scorer(server)
    with pytest.raises(NoPromptLogprobsError) as info:
        scorer.score([REQUEST] * 6)
    message = str(info.value)
    assert "OpenAI's own chat models cannot" in message
    assert "vllm" in message.lower()
    # tried once: not once per request, no retries
    assert len(server.completions) == 1


def test_echo_rejected_by_the_server_is_a_clear_error(server: FaultyServer) -> None:
    # what OpenAI's API says to echo + logprobs on a chat model
    refusal = {"error": {"message": "The 'echo' and 'logprobs' parameters are not supported"}}
    server.default = ("status", 400, {}, refusal)
    with pytest.raises(NoPromptLogprobsError, match="OpenAI's own chat models cannot do this"):
        make_scorer(server).score([REQUEST])
    assert [body.get("echo") for body in server.completions] == [True]  # not retried


def test_unauthorized_names_the_problem_not_the_key(server: FaultyServer) -> None:
    server.default = ("status", 401, {}, {"error": {"message": f"bad key {SECRET[:6]}"}})
    with pytest.raises(ScorerError) as info:
        make_scorer(server).score([REQUEST])
    assert "api_key" in str(info.value)
    assert SECRET not in str(info.value)
    assert len(server.completions) == 1  # not retried


def test_sync_concurrency_is_limited(server: FaultyServer) -> None:
    server.default = ("sleep_ok", 0.5)
    results = make_scorer(server, max_concurrency=3).score([REQUEST] * 10)
    assert len(results) == 10
    assert server.max_in_flight == 3


async def test_async_concurrency_is_limited(server: FaultyServer) -> None:
    server.default = ("sleep_ok", 0.5)
    scorer = make_scorer(server, max_concurrency=4)
    results = await scorer.ascore([REQUEST] * 13)
    assert len(results) == 13
    for result in results:
        assert_good(result)
    # Exactly 4 at once: the limit holds and the requests really overlap. No wall-clock
    # bound: under CI load it measured the machine, not the scorer.
    assert server.max_in_flight == 4


async def test_async_retries_after_500(server: FaultyServer) -> None:
    server.script.append(("status", 500, {}, {"error": {"message": "boom"}}))
    [result] = await make_scorer(server).ascore([REQUEST])
    assert_good(result)
    assert len(server.completions) == 2


def test_api_key_is_never_shown_or_logged(
    server: FaultyServer, caplog: pytest.LogCaptureFixture
) -> None:
    scorer = make_scorer(server)
    assert SECRET not in repr(scorer)
    assert SECRET not in str(scorer)
    assert "api_key=<set>" in repr(scorer)
    server.script.append(("status", 500, {}, {"error": {"message": "boom"}}))
    with caplog.at_level(logging.DEBUG):
        scorer.score([REQUEST])
    assert "retrying" in caplog.text
    assert SECRET not in caplog.text
    assert SECRET not in repr(vars(scorer).get("_headers"))


def test_chat_prompt_without_tokenize_or_template_is_a_clear_error(server: FaultyServer) -> None:
    chat = [{"role": "user", "content": "What is the capital of France?"}]
    with pytest.raises(InputError, match="chat_template_renderer"):
        make_scorer(server).score([ScoreRequest(chat, RESPONSE)])
    assert server.completions == []


@pytest.mark.parametrize("endpoint", ["/chat/completions", "/completions/"])
def test_a_base_url_naming_an_endpoint_is_refused_with_the_v1_url(endpoint: str) -> None:
    """Review of issue 49: base_url=".../v1/chat/completions" was taken and a chat prompt
    then failed with "pass proxy=...: no /tokenize endpoint"."""
    with pytest.raises(InputError, match=r"ends with /v1 \(http://127\.0\.0\.1:8765/v1\)"):
        OpenAICompletionsScorer(f"http://u:pw@127.0.0.1:8765/v1{endpoint}", "smollm2")


def test_a_chat_prompt_at_a_base_url_without_v1_says_check_the_v1(server: FaultyServer) -> None:
    """A host answering 404 at a base URL without /v1: the error names the likely fix."""
    root = server.base_url.removesuffix("/v1")
    chat = [{"role": "user", "content": "What is the capital of France?"}]
    scorer = OpenAICompletionsScorer(root + "/api", "smollm2", timeout=5.0)
    with pytest.raises(NoChatTemplateError, match=r"check base_url, which ends with /v1"):
        scorer.score([ScoreRequest(chat, RESPONSE)])
    with pytest.raises(NoChatTemplateError) as raised:  # a /v1 URL: the proxy fix alone
        make_scorer(server).score([ScoreRequest(chat, RESPONSE)])
    assert "check base_url" not in str(raised.value)


@pytest.mark.parametrize("prompt", [PROMPT, [{"role": "user", "content": "Capital?"}]])
@pytest.mark.parametrize("post_status", [404, 405])
def test_a_url_answering_404_everywhere_is_named_as_no_server(
    server: FaultyServer, prompt: Any, post_status: int
) -> None:
    """Review 48 (6): a URL answering 404 to everything got the chat-template advice
    ("pass proxy=..."); it is the wrong URL: a typed error names it and base_url. Review
    14: a POST answered 405 is not reported as a 404."""
    from camab_rag.errors import ServerNotFoundError

    server.get_status = 404
    server.default = ("status", post_status, {}, {"detail": "Not Found"})
    with pytest.raises(ServerNotFoundError) as raised:
        make_scorer(server).score([ScoreRequest(prompt, RESPONSE)])
    message = str(raised.value)
    assert message.startswith(f"no OpenAI-compatible server at {server.base_url}: ")
    assert "its /models answers HTTP 404 and its /tokenize fails too" in message
    assert "check base_url, which ends with /v1" in message and "proxy" not in message
    assert SECRET not in message and server.completions == []


def test_a_failing_tokenize_is_named_and_probed_again_not_taken_for_a_missing_one(
    server: FaultyServer,
) -> None:
    """A /tokenize that answers 500 is failing, not missing: a chat prompt gets the real
    cause (no 'no /tokenize endpoint', which would hand scoring to a proxy), the next
    request probes again, and a redirect is refused as such."""
    chat = [{"role": "user", "content": "What is the capital of France?"}]
    server.tokenize_reply = (500, {})
    scorer = make_scorer(server, max_retries=0)
    with pytest.raises(TransientScorerError, match=r"/tokenize failed \(.*HTTP 500: tokenizer"):
        scorer.score([ScoreRequest(chat, RESPONSE)])
    probes = server.tokenize_calls
    server.tokenize_reply = None  # it recovers: the next request probes again, token mode
    server.tokenize = {PROMPT: list(range(12)), RESPONSE: list(range(8))}
    assert_good(scorer.score([REQUEST])[0])
    assert server.tokenize_calls > probes
    assert server.completions[-1]["prompt"] == list(range(12)) + list(range(8))
    server.tokenize_reply = (307, {"Location": "http://elsewhere.invalid/tokenize"})
    with pytest.raises(ScorerError, match="redirected /tokenize to http://elsewhere"):
        make_scorer(server).score([ScoreRequest(chat, RESPONSE)])


def test_chat_prompt_with_a_renderer_uses_text_mode(server: FaultyServer) -> None:
    chat = [{"role": "user", "content": "What is the capital of France?"}]
    rendered: list[object] = []

    def renderer(messages: object) -> str:
        rendered.append(messages)
        return PROMPT

    [result] = make_scorer(server, chat_template_renderer=renderer).score(
        [ScoreRequest(chat, RESPONSE)]
    )
    assert_good(result)
    assert rendered == [chat]
    assert server.completions[0]["prompt"] == PROMPT + RESPONSE


def test_generate_is_greedy_and_stripped(server: FaultyServer) -> None:
    server.default = ("text", " Paris. \n")
    answers = make_scorer(server).generate(["Q: capital of France?\nA:"], max_new_tokens=7)
    assert answers == ["Paris."]
    body = server.completions[0]
    assert body["max_tokens"] == 7 and body["temperature"] == 0.0
    assert "echo" not in body


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(InputError, match="base_url"):
        OpenAICompletionsScorer("127.0.0.1:8000", "m")
    with pytest.raises(InputError, match="model"):
        OpenAICompletionsScorer("http://127.0.0.1:8000/v1", "")
    with pytest.raises(InputError, match="max_concurrency"):
        OpenAICompletionsScorer("http://127.0.0.1:8000/v1", "m", max_concurrency=0)


def test_empty_response_is_refused(server: FaultyServer) -> None:
    with pytest.raises(InputError, match="response"):
        make_scorer(server).score([ScoreRequest(PROMPT, "")])


def test_retry_after_header_forms() -> None:
    assert retry_after({"retry-after": "2"}) == 2.0
    assert retry_after({"retry-after-ms": "250"}) == 0.25
    assert retry_after({}) is None
    assert retry_after({"retry-after": "soon", "retry-after-ms": "x"}) is None  # unreadable
    future = time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime(time.time() + 30))
    assert 25 <= (retry_after({"retry-after": future}) or 0) <= 31


def test_unreachable_server_is_a_clear_error() -> None:
    from vllm_server import free_port

    url = f"http://127.0.0.1:{free_port()}/v1"
    scorer = OpenAICompletionsScorer(url, "m", max_retries=1, backoff_base=0.01, timeout=2)
    with pytest.raises(ScorerError, match="failed after 2 attempts: connection error") as caught:
        scorer.score([REQUEST])
    assert url in str(caught.value)  # which server failed
    # nothing listens there: a ServerRefusedError (a TransientScorerError) that says so
    assert isinstance(caught.value, ServerRefusedError)
    assert "nothing accepts connections there: is it running? check base_url" in str(caught.value)


def test_token_ids_that_do_not_rejoin_fall_back_to_text(server: FaultyServer) -> None:
    """A tokenizer that alters a text tokenized alone (a SentencePiece prefix space) makes
    the token-id echo differ from the response: the scorer then scores the joint text."""
    server.tokenize = {PROMPT: list(range(12)), RESPONSE: list(range(8))}
    altered = json.loads(GOOD)
    choice = altered["choices"][0]
    choice["logprobs"]["tokens"][12] = "Paris"
    choice["text"] = choice["text"].replace(" Paris", "Paris")
    server.ids_reply = json.dumps(altered).encode()
    [result] = make_scorer(server).score([REQUEST])
    assert_good(result)
    prompts = [body["prompt"] for body in server.completions]
    assert prompts == [list(range(12)) + list(range(8)), PROMPT + RESPONSE]


def test_token_id_mode_sends_ids(server: FaultyServer) -> None:
    server.tokenize = {PROMPT: list(range(12)), RESPONSE: list(range(8))}
    [result] = make_scorer(server).score([REQUEST])
    assert_good(result)
    assert server.completions[0]["prompt"] == list(range(12)) + list(range(8))


# ------------------------------------------------------------------ bounded waits (#37)
def plain(messages: Any) -> str:
    """A chat template for tests: the messages' texts, one per line."""
    return "".join(f"{m['content']}\n" for m in messages)


def outcome_within(seconds: float, work: Any) -> BaseException | Any:
    """What ``work()`` returns or raises, failing the test if it is still running after
    ``seconds`` (a wait with no bound would hang the suite instead of failing it)."""
    box: list[Any] = []

    def run() -> None:
        try:
            box.append(work())
        except BaseException as error:  # handed back to the test
            box.append(error)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(seconds)
    assert not worker.is_alive(), f"still waiting after {seconds} s: the wait is unbounded"
    return box[0]


def test_a_trickling_body_is_cut_at_the_timeout(server: FaultyServer) -> None:
    """A byte every 0.2 s never lets httpx's per-read timeout fire: the attempt's total
    timeout must cut it (on main it hung for as long as the body lasted)."""
    server.default = ("trickle", 0.2)
    scorer = make_scorer(server, timeout=0.6, max_retries=0)
    error = outcome_within(10, lambda: scorer.score([REQUEST]))
    assert isinstance(error, TransientScorerError), error
    assert "timed out after 0.6 s" in str(error)
    error = outcome_within(10, lambda: asyncio.run(scorer.ascore([REQUEST])))
    assert isinstance(error, TransientScorerError), error


def test_retries_count_against_the_retry_budget(server: FaultyServer) -> None:
    """A hung server: the retries stop once the budget has passed since the first failure,
    attempts included (on main only the pauses counted: 6 attempts of 0.4 s each)."""
    server.default = ("slow", 3.0)
    scorer = make_scorer(server, timeout=0.4, max_retries=5, retry_budget_s=1.0)
    error = outcome_within(10, lambda: scorer.score([REQUEST]))
    assert isinstance(error, TransientScorerError) and "timed out" in str(error), error
    # retried, and stopped by the budget before max_retries (6 attempts): at most the first
    # attempt and three retries fit in 1 s of 0.4 s attempts, however loaded the machine
    assert 2 <= len(server.completions) <= 4


def test_the_tokenize_probe_counts_against_the_retry_budget(server: FaultyServer) -> None:
    """A /tokenize probe that hangs is one more call of the same request, under the same
    budget (on main it had 6 attempts of its own)."""
    server.tokenize_delay = 3.0
    scorer = make_scorer(server, timeout=0.4, max_retries=5, retry_budget_s=0.3)
    error = outcome_within(10, lambda: scorer.score([REQUEST]))
    assert isinstance(error, TransientScorerError) and error.unreachable, error
    assert server.tokenize_calls == 2
    assert server.completions == []


@pytest.mark.parametrize("run", ["sync", "async"])
def test_an_attribution_deadline_bounds_a_hung_server(server: FaultyServer, run: str) -> None:
    import camab_rag

    server.default = ("slow", 5.0)
    scorer = make_scorer(server, timeout=30, retry_budget_s=30, chat_template_renderer=plain)
    arguments = ("Capital?", ["Paris is in France.", "Rome is in Italy."], "Paris.", scorer)

    def attribute() -> Any:
        if run == "sync":
            return camab_rag.attribute(
                *arguments, budget=4, settings=AttributionSettings(deadline_s=0.8)
            )
        return asyncio.run(
            camab_rag.aattribute(*arguments, budget=4, settings=AttributionSettings(deadline_s=0.8))
        )

    error = outcome_within(10, attribute)
    assert isinstance(error, DeadlineExceededError), error
    assert "deadline of 0.8 s (deadline_s)" in str(error)


# ------------------------------------------------------------------ redaction (#37)
ECHOED = f"upstream failed for Bearer {SECRET}"


@pytest.mark.parametrize(
    "fault",
    [
        ("status", 500, {}, {"error": {"message": ECHOED}}),
        ("status", 400, {}, {"error": {"message": ECHOED}}),
        ("status", 401, {}, {"error": {"message": ECHOED}}),
        ("status", 404, {}, {"detail": ECHOED}),
        ("raw", 502, ECHOED.encode()),
    ],
    ids=["500", "400", "401", "404", "502-text"],
)
def test_a_key_the_server_echoes_is_masked(
    server: FaultyServer, caplog: pytest.LogCaptureFixture, fault: tuple[Any, ...]
) -> None:
    """On main the echoed key reached the ScorerError, the INFO retry log and (chained)
    the openai exception with the request that carried it."""
    server.default = fault
    with caplog.at_level(logging.DEBUG), pytest.raises(ScorerError) as info:
        make_scorer(server, max_retries=1).score([REQUEST])
    shown = "".join(traceback.format_exception(info.value)) + caplog.text
    assert SECRET not in shown
    assert info.value.__cause__ is None and info.value.__context__ is None


def test_credentials_in_the_base_url_are_used_but_never_shown(
    server: FaultyServer, caplog: pytest.LogCaptureFixture
) -> None:
    password = "pw-IN-URL-5e2f"
    url = server.base_url.replace("http://", f"http://admin:{password}@")
    scorer = OpenAICompletionsScorer(url, "smollm2", max_retries=1, backoff_base=0.01)
    [result] = scorer.score([REQUEST])
    assert_good(result)
    sent = server.headers[0]["Authorization"]
    assert base64.b64decode(sent.split()[1]).decode() == f"admin:{password}"
    assert password not in repr(scorer) and password not in scorer.base_url
    server.default = ("status", 503, {}, {"error": {"message": f"db {url} down"}})
    with caplog.at_level(logging.DEBUG), pytest.raises(ScorerError) as info:
        scorer.score([REQUEST])
    assert password not in "".join(traceback.format_exception(info.value)) + caplog.text


# ------------------------------------------------------------------ no silent zeros (#37)
def test_a_positive_log_probability_is_a_malformed_response(server: FaultyServer) -> None:
    """On main it was accepted (the scores came out as zeros, no warning)."""
    server.default = ("positive",)
    with pytest.raises(TransientScorerError, match=r"log-probability 0.5 .* never above 0"):
        make_scorer(server, max_retries=1).score([REQUEST])
    assert len(server.completions) == 2  # retried as a malformed body


def test_a_miscounted_response_is_retried_and_never_demotes_the_model(
    server: FaultyServer,
) -> None:
    """One response whose usage.prompt_tokens is off is a malformed answer, not a model
    that cannot score: on main it switched the chain's model to the proxy for good."""
    server.script.append(("miscounted",))
    scorer = ProxyFallbackScorer(make_scorer(server), KeywordScorer())
    [result] = scorer.score([REQUEST])
    assert_good(result)
    assert not scorer.using_proxy and scorer.scored_by.proxy is False
    assert [body.get("echo") for body in server.completions] == [True, True]  # the same ask


def test_a_model_the_server_does_not_serve_is_named_without_a_list(server: FaultyServer) -> None:
    """OpenAI's "no such model" 404 on a server with no /tokenize and no GET /v1/models
    (this one answers 501): the typed error names the model and the server, lists nothing,
    and is not retried; the key is never shown."""
    from camab_rag.errors import ModelNotServedError

    message = "The model `smollm2` does not exist or you do not have access to it."
    server.default = ("status", 404, {}, {"error": {"message": message}})
    scorer = make_scorer(server)
    with pytest.raises(ModelNotServedError) as caught:
        scorer.score([REQUEST])
    assert str(caught.value) == (
        f"model 'smollm2' is not served at {server.base_url}: pass model= one of the names "
        "its /v1/models lists"
    )
    assert caught.value.served == () and len(server.completions) == 1
    assert SECRET not in str(caught.value)


def test_a_failing_server_says_it_is_failing_whatever_the_prompt(server: FaultyServer) -> None:
    """Fresh-user review 7: a server answering 502 everywhere made attribute() on plain
    text documents say "cannot score chat prompts now", which reads as a missing
    capability (and a chat one, where the user gave text). The message leads with the
    failure; only a chat prompt names the chat template; a text prompt never says chat."""
    server.tokenize_reply = (502, {})
    server.default = ("status", 502, {}, {"error": {"message": "Bad Gateway"}})
    scorer = make_scorer(server, max_retries=0)
    failing = f"the server at {server.base_url} is failing now: its /tokenize failed ("
    with pytest.raises(TransientScorerError) as raised:
        attribute("Where?", ["Paris is in France.", "Rome is in Italy."], "In France.", scorer)
    message = str(raised.value)
    assert message.startswith(failing) and "HTTP 502" in message
    assert "cannot score" not in message and "this prompt is chat messages" in message
    with pytest.raises(TransientScorerError) as raised:
        scorer.score([ScoreRequest(PROMPT, RESPONSE)])
    assert "HTTP 502: Bad Gateway" in str(raised.value) and "chat" not in str(raised.value)


REFUSALS = json.loads(
    (FIXTURE_DIR / "context_too_long.json").read_text("utf-8")  # recorded from vLLM 0.32
)["cases"]


@pytest.mark.parametrize(
    ("case", "words"),
    [
        (REFUSALS[0], "a request has 2100 tokens, more than the model's limit 2048"),
        (REFUSALS[1], "a request has at least 2049 tokens, more than the model's limit 2048"),
        (REFUSALS[2], "more than the model's limit"),
    ],
    ids=[case["name"] for case in REFUSALS],
)
def test_a_request_longer_than_the_context_is_an_input_error_not_retried(
    server: FaultyServer, case: dict[str, Any], words: str
) -> None:
    """vLLM's HTTP 400 for a prompt over max_model_len says what the in-process scorer says
    (an InputError, "more than the model's limit"): not retried, nor sent another way."""
    server.default = ("raw", case["status"], json.dumps(case["body"]).encode())
    with pytest.raises(InputError, match=words) as info:
        make_scorer(server).score([REQUEST])
    assert not isinstance(info.value, (TransientScorerError, NoPromptLogprobsError))
    assert len(server.completions) == 1  # never retried, nor sent again another way
