"""Which scorer an audit uses, as a picklable recipe (each Ray actor builds its own).

:class:`ScorerSpec` says how to build the scorer: the in-process model (``kind="model"``),
a client to one or more OpenAI-compatible servers (``kind="http"``, requests spread over
the servers round-robin), the simulated server (``kind="simulated"``, benchmarks), or any
zero-argument factory (``kind="factory"``, must be importable where it runs).
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from camab_rag.errors import InputError
from camab_rag.scorers.base import ResponseLogprobs, Scorer, ScoreRequest, parallel_requests

ScorerKind = Literal["model", "http", "simulated", "factory"]


class PooledScorer:
    """Spread calls over several scorers (e.g. one client per server URL), round-robin."""

    def __init__(self, scorers: Sequence[Scorer]) -> None:
        if not scorers:
            raise InputError("a scorer pool needs at least one scorer")
        self.scorers = list(scorers)
        self._next = itertools.cycle(range(len(self.scorers)))

    @property
    def parallel_requests(self) -> int:
        """The smallest parallel capacity of the pool: one batch goes to one scorer."""
        return min(parallel_requests(s) for s in self.scorers)

    def _pick(self) -> Scorer:
        return self.scorers[next(self._next)]

    def score(self, requests: Sequence[ScoreRequest]) -> list[ResponseLogprobs]:
        return self._pick().score(requests)

    async def ascore(self, requests: Sequence[ScoreRequest]) -> list[ResponseLogprobs]:
        return await self._pick().ascore(requests)


@dataclass(frozen=True)
class ScorerSpec:
    """A recipe for the audit's scorer.

    Attributes:
        kind: ``"model"``, ``"http"``, ``"simulated"`` or ``"factory"``.
        model: the in-process model (``"smollm2"``, ``"qwen2.5-0.5b"`` or a directory).
        base_urls: the servers' OpenAI base URLs (``kind="http"``).
        model_name: the served model's name (``kind="http"``).
        api_key_env: environment variable holding the servers' API key, read where the
            scorer is built (the key itself never travels in the spec or a log).
        options: keyword arguments of the scorer's constructor.
        factory: ``() -> scorer`` (``kind="factory"``).
    """

    kind: ScorerKind = "model"
    model: str = "smollm2"
    base_urls: tuple[str, ...] = ()
    model_name: str = ""
    api_key_env: str | None = None
    options: dict[str, Any] = field(default_factory=dict)
    factory: Callable[[], Scorer] | None = None

    def __post_init__(self) -> None:
        if self.kind not in ("model", "http", "simulated", "factory"):
            raise InputError(f"unknown scorer kind {self.kind!r}")
        if self.kind == "http" and (not self.base_urls or not self.model_name):
            raise InputError("an HTTP scorer needs --base-url and --model-name")
        if self.kind == "factory" and not callable(self.factory):
            raise InputError("a factory scorer spec needs a callable factory")

    @property
    def remote(self) -> bool:
        """Whether scoring happens in a server (many calls in flight help)."""
        return self.kind in ("http", "simulated")

    def build(self) -> Scorer:
        """Build the scorer (loads the model for ``kind="model"``)."""
        if self.kind == "model":
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            from camab_rag.scorers.transformers_scorer import TransformersScorer

            return TransformersScorer(self.model, **self.options)
        if self.kind == "http":
            from camab_rag.scorers.openai_completions import OpenAICompletionsScorer

            key = os.environ.get(self.api_key_env) if self.api_key_env else None
            if self.api_key_env and not key:
                raise InputError(f"--api-key-env {self.api_key_env}: the variable is not set")
            clients: list[Scorer] = [
                OpenAICompletionsScorer(url, self.model_name, key, **self.options)
                for url in self.base_urls
            ]
            return clients[0] if len(clients) == 1 else PooledScorer(clients)
        if self.kind == "simulated":
            from camab_cli.audit.simulated import SimulatedScorer

            return SimulatedScorer(**self.options)
        assert self.factory is not None
        return self.factory()
