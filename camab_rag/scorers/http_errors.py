"""What a failed call to an OpenAI-compatible server means for a scorer: retry or stop.

:class:`ServerErrors` maps a failed attempt to a :class:`~camab_rag.retry.Retryable`
(timeout, connection error, 408, 429, 5xx, malformed body) or a clear final error, the
server's secrets masked and no client exception chained.
"""

from __future__ import annotations

import copy
import email.utils
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

import httpx

from camab_rag.errors import (
    CamabError,
    CredentialsRefusedError,
    ModelNotServedError,
    ScorerError,
    TextError,
)
from camab_rag.redaction import Secrets, public_url
from camab_rag.retry import Retryable
from camab_rag.scorers.echo import NoPromptLogprobsError, _clip

E = TypeVar("E", bound=BaseException)


class RedirectRefusedError(ScorerError):
    """The server answered with a redirect, which is never followed (no credential goes
    to another URL)."""


@dataclass(frozen=True)
class ServerErrors:
    """The meaning of failures from one server (``base_url`` without credentials) serving
    ``model``, with ``secrets`` masked in every message."""

    base_url: str
    model: str
    secrets: Secrets

    def scrub(self, error: E) -> E:
        """``error`` itself, or a copy whose message has this server's secrets masked."""
        text = str(error)
        clean = self.secrets.clean(text)
        if clean == text:
            return error
        scrubbed = copy.copy(error)
        scrubbed.args = (clean,)
        scrubbed.__cause__ = scrubbed.__context__ = None
        return scrubbed

    def classify(self, exc: BaseException, limit: float) -> BaseException:
        """Map a failed attempt to ``Retryable`` or a clear, final error (secrets masked);
        ``limit``: the seconds the attempt was allowed."""
        if isinstance(exc, (Retryable, CamabError)):
            return self.scrub(exc)
        if isinstance(exc, httpx.TimeoutException):
            return Retryable(f"request timed out after {limit:g} s", unreachable=True)
        if isinstance(exc, httpx.TransportError):
            return Retryable(
                self.secrets.clean(f"connection error: {_describe(exc)}"),
                unreachable=isinstance(exc, httpx.ConnectError),
            )
        if isinstance(exc, UnicodeEncodeError):  # the request's own text: not the server's
            return TextError(
                "the request holds text that cannot be encoded as UTF-8 (a lone surrogate): "
                "the input is at fault, not the server; camab_rag.text_gate.check_text names "
                "the field and position",
                reason="surrogate",
            )
        if isinstance(exc, ValueError):  # a malformed JSON body or echo
            return Retryable(
                self.secrets.clean(f"malformed response body: {type(exc).__name__}: {exc}")
            )
        return self.scrub(exc)

    def reply_json(self, status: int, headers: Mapping[str, str], content: bytes, path: str) -> Any:
        """The JSON body of a successful reply from ``path``; an error status raises what
        it means (:meth:`status_error`)."""
        if status >= 400 or status < 200:
            message = self.secrets.clean(_error_message(content))
            raise self.status_error(status, headers, message, path)
        if 300 <= status < 400:
            target = self.secrets.clean(public_url(headers.get("location", "another URL")))
            raise RedirectRefusedError(
                f"the server at {self.base_url} redirected {path} to {target} (HTTP {status}):"
                " redirects are not followed, so no credential reaches another URL; pass the "
                "URL it redirects to as base_url"
            )
        try:
            return json.loads(content)
        except ValueError as exc:
            raise Retryable(f"malformed response body: {type(exc).__name__}: {exc}") from None

    def model_not_served(self, served: tuple[str, ...]) -> ModelNotServedError:
        """The error of a model this server does not serve; ``served``: what it does."""
        listed = f" (it serves: {', '.join(served)})" if served else ""
        return ModelNotServedError(
            self.secrets.clean(
                f"model {self.model!r} is not served at {self.base_url}{listed}: pass "
                "model= one of the names its /v1/models lists"
            ),
            served,
        )

    def status_error(
        self, status: int, headers: Mapping[str, str], message: str, path: str
    ) -> BaseException:
        """What an HTTP error status means for a scorer (``message``: the server's, masked)."""
        wait = retry_after(headers)
        if status == 429 or status == 408 or status >= 500:
            return Retryable(f"HTTP {status}: {_clip(message, 200)}", wait, status_code=status)
        if status in (401, 403):
            return CredentialsRefusedError(
                f"the server at {self.base_url} refused the request (HTTP {status}): check "
                "the api_key"
            )
        if status == 404 and "not supported" in message.lower():
            # a chat-only model behind /v1/completions (OpenAI: "This is a chat model and
            # not supported in the v1/completions endpoint")
            return NoPromptLogprobsError(
                f"the server at {self.base_url} does not serve {path} for model "
                f"{self.model!r} (HTTP 404: {_clip(message, 200)})"
            )
        if status == 404 and _names_missing_model(message):
            return self.model_not_served(())
        if status == 404:
            return ScorerError(
                f"HTTP 404 from {path}: {_clip(message, 200)} (check "
                f"base_url ends with /v1 and that model {self.model!r} is served)"
            )
        lowered = message.lower()
        if any(w in lowered for w in ("echo", "logprobs", "prompt_logprobs")):
            return NoPromptLogprobsError(
                f"the server rejected a request for prompt log-probabilities (HTTP {status}: "
                f"{_clip(message, 200)})"
            )
        return ScorerError(f"HTTP {status} from {self.base_url}: {_clip(message, 300)}")


def as_dict(raw: Any) -> dict[str, Any]:
    """A completion as plain JSON data."""
    if isinstance(raw, dict):
        return raw
    raise Retryable(f"malformed response body: {type(raw).__name__}")


def tokens_from(body: object) -> list[int]:
    """The token ids of a ``/tokenize`` answer."""
    tokens = body.get("tokens") if isinstance(body, dict) else None
    if not isinstance(tokens, list) or not all(isinstance(t, int) for t in tokens):
        raise ScorerError("malformed /tokenize response: no integer 'tokens' list")
    return tokens


def served_models(body: object) -> tuple[str, ...]:
    """The model ids of a ``/v1/models`` answer (``{"data": [{"id": ...}, ...]}``)."""
    data = body.get("data") if isinstance(body, dict) else None
    if not isinstance(data, list):
        return ()
    ids = (entry.get("id") for entry in data if isinstance(entry, dict))
    return tuple(_clip(i, 80) for i in ids if isinstance(i, str))[:20]


def _names_missing_model(message: str) -> bool:
    """Whether a 404's message is the server's "no such model" answer (vLLM: "The model
    `x` does not exist", OpenAI: "... does not exist or you do not have access to it",
    others: "model 'x' not found")."""
    lowered = message.lower()
    missing = "does not exist" in lowered or "not found" in lowered
    return missing and "model" in lowered


def retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds from ``retry-after-ms`` or ``Retry-After`` (seconds or an HTTP date)."""
    value = headers.get("retry-after-ms")
    if value:
        try:
            return float(value) / 1000.0
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return float(value)
    except ValueError:
        parsed = email.utils.parsedate_to_datetime(value) if value else None
        if parsed is None:
            return None
        return max(0.0, parsed.timestamp() - time.time())


def _error_message(content: bytes) -> str:
    """The message of an error body (``{"error": {"message": ...}}``, ``{"message"}``,
    ``{"detail"}``, or the text itself)."""
    text = content.decode("utf-8", errors="replace")
    try:
        body = json.loads(text)
    except ValueError:
        return text.strip() or "(empty body)"
    if isinstance(body, Mapping):
        error = body.get("error", body)
        if isinstance(error, Mapping):
            for key in ("message", "detail"):
                if key in error:
                    return str(error[key])
        if isinstance(error, str):
            return error
    return text.strip()


def _describe(exc: BaseException) -> str:
    cause = exc.__cause__ or exc.__context__
    text = str(exc) or type(exc).__name__
    return f"{text} ({type(cause).__name__}: {cause})" if cause else text
