"""What the HTTP scorer sends for one request, and how it reads the answer.

With vLLM's ``/tokenize`` (probed once) the prompt and response are tokenized separately
and sent as token ids, as the in-process scorer does; otherwise ``prompt + response`` is
sent as text and the response found by character offset (chat prompts then need a local
chat template). :class:`RequestPlanner` makes the :class:`Plan`.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from camab_rag.errors import (
    CredentialsRefusedError,
    DeadlineExceededError,
    InputError,
    ModelNotServedError,
    ScorerError,
    TransientScorerError,
)
from camab_rag.retry import Retryable
from camab_rag.scorers.base import (
    ChatMessage,
    Prompt,
    ResponseLogprobs,
    ScoreRequest,
    check_messages,
)
from camab_rag.scorers.echo import NoChatTemplateError, parse_echo
from camab_rag.scorers.encoding import Recent
from camab_rag.scorers.http_errors import RedirectRefusedError, as_dict, tokens_from
from camab_rag.scorers.transport import AsyncClients, HttpTransport, RequestClock
from camab_rag.steps import BlockingCall, Steps, drive

logger = logging.getLogger(__name__)

ChatTemplateRenderer = Callable[[Sequence[ChatMessage]], str]
"""Renders chat messages to the model's prompt text, with the assistant header appended."""


@dataclass(frozen=True)
class Plan:
    """What to send for one request: the prompt and response as token ids (with their
    counts) or as one text (with the prompt's length in characters)."""

    prompt: str | list[int]
    response: str
    prompt_chars: int | None = None
    prompt_ids: int | None = None
    response_ids: int | None = None


class RequestPlanner:
    """Plans one scorer's requests: renders prompts, asks ``/tokenize`` (probed once) and keeps
    the last token ids it gave."""

    def __init__(
        self,
        http: HttpTransport,
        *,
        tokenization: Literal["auto", "server", "text"],
        renderer: ChatTemplateRenderer | None,
        tokenizer_dir: str | None,
    ) -> None:
        self._http = http
        self._renderer = renderer
        self._tokenizer_dir = tokenizer_dir
        self._hf_tokenizer: Any = None
        self._has_tokenize: bool | None = (
            None if tokenization == "auto" else (tokenization == "server")
        )
        self._id_cache: Recent[str, list[int]] = Recent(256)  # the last token ids given
        self._probe_failure: TransientScorerError | None = None  # the last probe's, if it failed

    # ------------------------------------------------------------------------ prompts

    def render_prompt(self, prompt: Prompt) -> str:
        """Plain text verbatim; chat messages through the renderer or the local tokenizer
        (:class:`NoChatTemplateError` when neither is there)."""
        if isinstance(prompt, str):
            return prompt
        messages = check_messages(prompt)
        if self._renderer is not None:
            return str(self._renderer(messages))
        if self._tokenizer_dir is not None:
            if self._hf_tokenizer is None:
                from camab_rag.scorers.models import set_offline_flags

                set_offline_flags()
                from transformers import AutoTokenizer

                self._hf_tokenizer = AutoTokenizer.from_pretrained(
                    self._tokenizer_dir, local_files_only=True
                )
            text = self._hf_tokenizer.apply_chat_template(
                messages, tokenize=False, add_generation_prompt=True
            )
            return str(text)
        failure = self._probe_failure
        if failure is not None:  # /tokenize is there but failing: not a reason for a proxy
            raise TransientScorerError(
                f"the server at {self._http.base_url} cannot score chat prompts now: its "
                f"/tokenize failed ({failure})",
                status_code=failure.status_code,
                retry_after=failure.retry_after,
            )
        url = self._http.base_url
        if not self._http.ends_with_v1:  # likely a wrong base URL, not a server without /tokenize
            raise NoChatTemplateError(
                f"the server at {url} answers no /tokenize: check base_url, which ends with "
                "/v1 for an OpenAI-compatible server (http://127.0.0.1:8000/v1 for vLLM); if "
                "it is right, the server has no /tokenize endpoint to apply the model's chat "
                "template"
            )
        raise NoChatTemplateError(
            f"the server at {url} cannot score chat prompts: it has no "
            "/tokenize endpoint to apply the model's chat template (a hosted chat API cannot "
            "score a given text at all)"
        )

    def can_render_locally(self, prompt: Prompt) -> bool:
        return isinstance(prompt, str) or self._renderer is not None or bool(self._tokenizer_dir)

    def prompt_payload(self, prompt: Prompt) -> dict[str, Any]:
        """The ``/tokenize`` payload of a prompt (text, or messages for the server's
        chat template)."""
        if self.can_render_locally(prompt):
            text = self.render_prompt(prompt)
            return {"prompt": text, "add_special_tokens": isinstance(prompt, str)}
        return {
            "messages": check_messages(prompt),
            "add_generation_prompt": True,
            "add_special_tokens": False,
        }

    # ------------------------------------------------------------------- tokenization

    def tokenize_steps(
        self,
        payload: Mapping[str, Any],
        clients: AsyncClients | None,
        clock: RequestClock | None = None,
    ) -> Steps[list[int]]:
        body = {"model": self._http.model, **payload}
        return (
            yield from self._http.send("tokenize", "tokenize", body, tokens_from, clients, clock)
        )

    def probe_tokenize(self, clock: RequestClock | None = None) -> bool:
        """Whether the server has a vLLM-style ``/tokenize`` endpoint (asked once; its
        time counts against the retry budget of the request that asks, ``clock``)."""
        if self._has_tokenize is None:
            try:
                probe = {"prompt": "probe", "add_special_tokens": False}
                ids = drive(self.tokenize_steps(probe, None, clock))
                self._has_tokenize = bool(ids)
            except (
                CredentialsRefusedError,
                DeadlineExceededError,
                RedirectRefusedError,
                ModelNotServedError,
            ):
                raise  # a refused key, the deadline, a redirect, a wrong model name: not a
                # missing /tokenize
            except TransientScorerError as error:
                if error.unreachable:
                    raise  # the server is unreachable: say so rather than guess a mode
                self._probe_failure = error  # failing now (5xx, 429): text mode, probe again
                logger.debug("server /tokenize failed: %s", error)
                return False
            except ScorerError:
                self._has_tokenize = False  # no usable endpoint (404, other API): text mode
            self._probe_failure = None
            logger.debug("server /tokenize available: %s", self._has_tokenize)
        return bool(self._has_tokenize)

    def _tokenize_payloads(self, request: ScoreRequest) -> list[tuple[str, dict[str, Any]]]:
        """Cache key and ``/tokenize`` payload of the prompt, then of the response."""
        payloads = [
            self.prompt_payload(request.prompt),
            {"prompt": request.response, "add_special_tokens": False},
        ]
        return [(json.dumps(p, sort_keys=True), p) for p in payloads]

    # -------------------------------------------------------------------------- plans

    def text_plan(self, request: ScoreRequest) -> Plan:
        """``prompt + response`` as one text."""
        text = self.render_prompt(request.prompt)
        return Plan(text + request.response, request.response, prompt_chars=len(text))

    def plan_steps(
        self, request: ScoreRequest, clients: AsyncClients | None, clock: RequestClock
    ) -> Steps[Plan]:
        """The plan of a checked request: token ids where the server tokenizes, else
        text (a generator of HTTP calls, under the request's retry budget ``clock``)."""
        _check_request(request)
        if not (yield BlockingCall(lambda: self.probe_tokenize(clock))):
            return self.text_plan(request)
        ids = []
        for key, payload in self._tokenize_payloads(request):
            cached = self._id_cache.get(key)
            if cached is None:
                cached = yield from self.tokenize_steps(payload, clients, clock)
                self._id_cache.put(key, cached)
            ids.append(cached)
        return _id_plan(request.response, ids[0], ids[1])


def completion_body(model: str, plan: Plan, prompt_logprobs: bool) -> dict[str, Any]:
    """The ``/v1/completions`` body that scores ``plan``: with ``echo`` + ``logprobs``, or
    vLLM's ``prompt_logprobs``."""
    body: dict[str, Any] = {
        "model": model,
        "prompt": plan.prompt,
        # 1, not 0: some servers read max_tokens=0 as "no limit"; the generated token
        # is cut from the echo.
        "max_tokens": 1,
        "temperature": 0.0,
    }
    if prompt_logprobs:
        body["prompt_logprobs"] = 0  # vLLM's extension of the completions API
    else:
        body["echo"] = True
        body["logprobs"] = 0
    return body


def parse_completion(plan: Plan, raw: Any) -> ResponseLogprobs:
    """The response's log-probs in the answer to :func:`completion_body`."""
    body = as_dict(raw)
    choices = body.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], Mapping):
        raise Retryable("malformed response body: no choices")
    return parse_echo(
        choices[0],
        body.get("usage"),
        prompt_chars=plan.prompt_chars,
        response=plan.response,
        prompt_ids=plan.prompt_ids,
        response_ids=plan.response_ids,
    )


def answer_text(raw: Any) -> str:
    """The generated text of a completion, whitespace stripped."""
    body = as_dict(raw)
    choices = body.get("choices")
    if not isinstance(choices, list) or not choices:
        raise Retryable("malformed response body: no choices")
    return str(choices[0].get("text") or "").strip()


def _id_plan(response: str, prompt_ids: list[int], response_ids: list[int]) -> Plan:
    if not response_ids:
        raise InputError("the response has no tokens to score")
    if not prompt_ids:
        raise InputError("the prompt is empty: the response's first token cannot be scored")
    return Plan(
        [*prompt_ids, *response_ids],
        response,
        prompt_ids=len(prompt_ids),
        response_ids=len(response_ids),
    )


def _check_request(request: ScoreRequest) -> None:
    if not isinstance(request, ScoreRequest):
        raise InputError(f"expected a ScoreRequest, got {type(request).__name__}")
    if not isinstance(request.response, str) or not request.response:
        raise InputError("ScoreRequest.response must be a non-empty string")
    if not isinstance(request.prompt, str):
        check_messages(request.prompt)
