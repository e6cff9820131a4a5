"""The scorer protocol: the only way the engine talks to a language model.

A scorer returns the teacher-forced log-probs of a given response under a given prompt,
for a batch of requests. A prompt is plain text (verbatim) or chat messages (rendered with
the model's chat template, the response as the assistant's turn).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray

from camab_rag.errors import InputError

ChatMessage = Mapping[str, str]
"""One chat message: ``{"role": "system" | "user" | "assistant", "content": str}``."""

Prompt = str | Sequence[ChatMessage]
"""Plain text (scored verbatim) or a list of chat messages (scored with a chat template)."""


def prompt_texts(prompt: Prompt) -> list[str]:
    """The texts a prompt holds: the prompt itself when plain, else each message's content."""
    return [prompt] if isinstance(prompt, str) else [message["content"] for message in prompt]


@dataclass(frozen=True)
class ScoreRequest:
    """Score ``response`` as the continuation of ``prompt``."""

    prompt: Prompt
    response: str


@dataclass(frozen=True)
class ResponseLogprobs:
    """Teacher-forced log-probabilities of the response tokens.

    Attributes:
        logprobs: shape ``(T,)``, natural-log probability of each response token.
        token_offsets: shape ``(T,)``, character offset in the response where each token
            starts (used to restrict a reward to one answer sentence).
        tokens: the decoded text of each token (for display and checks).
        prompt_tokens: number of tokens the model processed before the response
            (for cost reports).
    """

    logprobs: NDArray[np.float64]
    token_offsets: NDArray[np.int64]
    tokens: tuple[str, ...] = ()
    prompt_tokens: int = 0
    extra: Mapping[str, object] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.logprobs.ndim != 1 or self.token_offsets.shape != self.logprobs.shape:
            raise ValueError(
                "ResponseLogprobs: logprobs and token_offsets must be 1-D arrays of equal "
                f"length, got shapes {self.logprobs.shape} and {self.token_offsets.shape}"
            )
        if self.logprobs.size == 0:
            raise ValueError("ResponseLogprobs: the response has no tokens to score")
        if not np.all(np.isfinite(self.logprobs)):
            raise ValueError("ResponseLogprobs: a token log-probability is not finite")


@runtime_checkable
class Scorer(Protocol):
    """Anything that scores a batch of (prompt, response) pairs.

    ``score`` and ``ascore`` return one :class:`ResponseLogprobs` per request, in order.

    Optionally, ``parallel_requests`` (an ``int`` attribute or property, read with
    :func:`parallel_requests`; 1 when absent) says how many requests of one batch the
    scorer runs at once for about the time of one: a GPU model's batch size, an HTTP
    client's requests in flight. ``method="auto"`` then scores that many Thompson draws
    per round (up to :data:`camab_rag.methods.auto.MAX_AUTO_BATCH`). A scorer that runs
    a batch's requests one after the other (a model on the CPU) leaves it at 1. It is not
    a member of the protocol, so scorers written without it still match.
    """

    def score(self, requests: Sequence[ScoreRequest]) -> list[ResponseLogprobs]: ...

    async def ascore(self, requests: Sequence[ScoreRequest]) -> list[ResponseLogprobs]: ...


class BaseScorer:
    """Convenience base: implement ``score``; ``ascore`` runs it in a worker thread.

    :attr:`parallel_requests` is 1; a subclass that scores several requests at once for
    the price of one overrides it, and one that wraps another scorer passes the wrapped
    scorer's value through.
    """

    @property
    def parallel_requests(self) -> int:
        """Requests this scorer runs at once for about the time of one (see
        :class:`Scorer`): 1, each request costs its own time."""
        return 1

    def score(self, requests: Sequence[ScoreRequest]) -> list[ResponseLogprobs]:
        raise NotImplementedError

    async def ascore(self, requests: Sequence[ScoreRequest]) -> list[ResponseLogprobs]:
        return await asyncio.to_thread(self.score, requests)


def parallel_requests(scorer: object) -> int:
    """How many requests ``scorer`` runs at once for about the time of one: its
    ``parallel_requests`` when that is a positive integer, else 1 (a scorer without the
    attribute, or with a value that is not a count, is taken to run requests one by one).
    """
    value = getattr(scorer, "parallel_requests", 1)
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        return 1
    return int(value)


@runtime_checkable
class TextGenerator(Protocol):
    """A model that can answer a prompt (greedy decoding), used to produce and regenerate
    responses. Real scorers usually implement this too."""

    def generate(self, prompts: Sequence[Prompt], *, max_new_tokens: int = 128) -> list[str]: ...


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
    """Which model scored an attribution.

    Attributes:
        model: the scoring model's name (``TransformersScorer.model_name``, the served
            model of an HTTP scorer, else the scorer's class name).
        proxy: ``True`` when it is not the model that wrote the answer but a proxy scoring
            it in that model's place (see :class:`camab_rag.scorers.proxy.ProxyFallbackScorer`).
        reason: why the proxy scored (what the answering model could not do).
    """

    model: str
    proxy: bool = False
    reason: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"model": self.model, "proxy": self.proxy, "reason": self.reason}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ScoredBy:
        reason = data.get("reason")
        return cls(str(data["model"]), bool(data.get("proxy", False)), reason and str(reason))


def scorer_model_name(scorer: object) -> str:
    """The name of the model behind a scorer, for reports (never its URL or key)."""
    for attribute in ("model_name", "model"):
        name = getattr(scorer, attribute, None)
        if isinstance(name, str) and name:
            return name
    return type(scorer).__name__


def scored_by(scorer: object) -> ScoredBy:
    """What a scorer says of itself (``scorer.scored_by``), else its model, not a proxy."""
    own = getattr(scorer, "scored_by", None)
    if isinstance(own, ScoredBy):
        return own
    return ScoredBy(scorer_model_name(scorer))
