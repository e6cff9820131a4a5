"""The scorer protocol, the only way the engine talks to a language model: the
teacher-forced log-probs of given responses under given prompts, for a batch of requests."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray

from camab_rag.errors import InputError

ChatMessage = Mapping[str, str]  # {"role": "system" | "user" | "assistant", "content": str}
Prompt = str | Sequence[ChatMessage]  # plain text, verbatim, or messages for a chat template


def prompt_texts(prompt: Prompt) -> list[str]:
    """The prompt itself when plain, else each message's content."""
    return [prompt] if isinstance(prompt, str) else [message["content"] for message in prompt]


@dataclass(frozen=True)
class ScoreRequest:
    """Score ``response`` as the continuation of ``prompt``."""

    prompt: Prompt
    response: str


@dataclass(frozen=True)
class ResponseLogprobs:
    """Teacher-forced log-probabilities of the response tokens: ``logprobs`` and
    ``token_offsets`` (where each token starts in the response) of shape ``(T,)``, the
    decoded ``tokens``, and the ``prompt_tokens`` processed before them (for costs)."""

    logprobs: NDArray[np.float64]
    token_offsets: NDArray[np.int64]
    tokens: tuple[str, ...] = ()
    prompt_tokens: int = 0

    def __post_init__(self) -> None:
        shapes = self.logprobs.shape, self.token_offsets.shape
        if self.logprobs.ndim != 1 or shapes[0] != shapes[1]:
            raise ValueError(f"ResponseLogprobs: logprobs and token_offsets of shapes {shapes}")
        if self.logprobs.size == 0:
            raise ValueError("ResponseLogprobs: the response has no tokens to score")
        if not np.all(np.isfinite(self.logprobs)):
            raise ValueError("ResponseLogprobs: a token log-probability is not finite")


@runtime_checkable
class Scorer(Protocol):
    """Anything that scores a batch of (prompt, response) pairs: ``score``/``ascore``
    return one :class:`ResponseLogprobs` per request, in order. An optional
    ``parallel_requests`` says how many requests it runs at once for the time of one."""

    def score(self, requests: Sequence[ScoreRequest]) -> list[ResponseLogprobs]: ...

    async def ascore(self, requests: Sequence[ScoreRequest]) -> list[ResponseLogprobs]: ...


class BaseScorer:
    """Convenience base: implement ``score``; ``ascore`` runs it in a worker thread."""

    def score(self, requests: Sequence[ScoreRequest]) -> list[ResponseLogprobs]:
        raise NotImplementedError

    async def ascore(self, requests: Sequence[ScoreRequest]) -> list[ResponseLogprobs]:
        return await asyncio.to_thread(self.score, requests)


def parallel_requests(scorer: object) -> int:
    """``scorer.parallel_requests`` when it is a positive integer, else 1."""
    value = getattr(scorer, "parallel_requests", 1)
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        return 1
    return int(value)


def check_messages(prompt: Any) -> list[dict[str, str]]:
    """Validate chat messages: each a mapping with string ``role`` and ``content``."""
    messages = []
    for index, message in enumerate(prompt):
        try:
            role, content = message["role"], message["content"]
        except (KeyError, TypeError):
            raise InputError(
                f"prompt message {index} must be a mapping with 'role' and 'content'"
            ) from None
        if not isinstance(role, str) or not isinstance(content, str):
            raise InputError(f"prompt message {index}: 'role' and 'content' must be strings")
        messages.append({"role": role, "content": content})
    if not messages:
        raise InputError("the prompt has no messages")
    return messages


@dataclass(frozen=True)
class ScoredBy:
    """Which model scored an attribution, whether it is a ``proxy`` scoring in place of the
    model that wrote the answer, and why."""

    model: str
    proxy: bool = False
    reason: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ScoredBy:
        reason = data.get("reason")
        return cls(str(data["model"]), bool(data.get("proxy", False)), reason and str(reason))


def _first_attr(obj: object, names: tuple[str, ...]) -> object:
    """The first of ``obj``'s attributes ``names`` that is set (not ``None`` or ``""``)."""
    return next((v for n in names if (v := getattr(obj, n, None)) is not None and v != ""), None)


def scorer_model_name(scorer: object) -> str:
    """The name of the model behind a scorer, for reports (never its URL or key)."""
    name = _first_attr(scorer, ("model_name", "model"))
    return name if isinstance(name, str) else type(scorer).__name__


def scored_by(scorer: object) -> ScoredBy:
    """``scorer.scored_by``, else its model, not a proxy."""
    own = getattr(scorer, "scored_by", None)
    return own if isinstance(own, ScoredBy) else ScoredBy(scorer_model_name(scorer))
