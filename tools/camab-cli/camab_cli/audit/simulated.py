"""A simulated scoring server, for capacity planning without GPUs.

:class:`SimulatedScorer` returns deterministic log-probabilities (a response word is
likely when the prompt contains it) after the delay a real server would take under a
simple model of an OpenAI-compatible inference server:

* the server processes prompt tokens at ``tokens_per_s`` in aggregate (a fluid queue:
  concurrent requests share that throughput, so past saturation they queue up);
* each request also pays a fixed ``latency_s`` (HTTP, scheduling, the one generated token)
  that does not occupy the server.

Every scorer built with the same ``server`` name shares one :class:`ServerModel`: in one
process through a module-level registry, across Ray actors through a named Ray actor
(:func:`ray_server`), so N actors really compete for one server's throughput. This is a
capacity model for benchmarks, never a substitute for a real scorer in an audit.
"""

from __future__ import annotations

import asyncio
import os
import re
import threading
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from camab_rag.scorers.base import ResponseLogprobs, ScoreRequest, prompt_texts

_WORD = re.compile(r"\S+")


def keyword_logprobs(request: ScoreRequest) -> ResponseLogprobs:
    """Deterministic log-probs: -0.1 for a response word found in the prompt, else -3."""
    text = "\n".join(prompt_texts(request.prompt)).lower()
    words = list(_WORD.finditer(request.response))
    if not words:
        raise ValueError("the response has no words to score")
    logprobs = [-0.1 if re.sub(r"\W", "", m.group()).lower() in text else -3.0 for m in words]
    return ResponseLogprobs(
        logprobs=np.array(logprobs, dtype=float),
        token_offsets=np.array([m.start() for m in words], dtype=np.int64),
        tokens=tuple(m.group() for m in words),
        prompt_tokens=len(text.split()),
    )


class ServerModel:
    """A pool of ``replicas`` fluid-queue servers behind a least-loaded balancer: each
    processes ``tokens_per_s`` prompt tokens per second, plus ``latency_s`` per request."""

    def __init__(self, tokens_per_s: float, latency_s: float, replicas: int = 1) -> None:
        self.tokens_per_s = float(tokens_per_s)
        self.latency_s = float(latency_s)
        self.busy_until = [0.0] * max(int(replicas), 1)
        self.requests = 0
        self.tokens = 0
        self.first_seen: dict[str, float] = {}
        self._lock = threading.Lock()

    def reserve(self, tokens: int, caller: str = "") -> float:
        """Book ``tokens`` of server work now; the wall-clock time the answer arrives."""
        with self._lock:
            now = time.time()
            self.first_seen.setdefault(caller, now)
            replica = min(range(len(self.busy_until)), key=self.busy_until.__getitem__)
            start = max(now, self.busy_until[replica])
            self.busy_until[replica] = start + tokens / self.tokens_per_s
            self.requests += 1
            self.tokens += tokens
            return self.busy_until[replica] + self.latency_s

    def stats(self) -> dict[str, Any]:
        """Requests, tokens, and when each caller (process) first called."""
        return {
            "requests": self.requests,
            "tokens": self.tokens,
            "first_seen": dict(self.first_seen),
        }


_LOCAL: dict[str, ServerModel] = {}
_LOCAL_LOCK = threading.Lock()


def local_server(
    name: str, tokens_per_s: float, latency_s: float, replicas: int = 1
) -> ServerModel:
    """The process-wide :class:`ServerModel` called ``name`` (created on first use)."""
    with _LOCAL_LOCK:
        if name not in _LOCAL:
            _LOCAL[name] = ServerModel(tokens_per_s, latency_s, replicas)
        return _LOCAL[name]


def ray_server(name: str, tokens_per_s: float, latency_s: float, replicas: int = 1) -> Any:
    """A named Ray actor holding the shared :class:`ServerModel` (get or create)."""
    import ray

    remote = ray.remote(num_cpus=0)(ServerModel)
    return remote.options(name=name, get_if_exists=True, lifetime="detached").remote(
        tokens_per_s, latency_s, replicas
    )


class SimulatedScorer:
    """Deterministic scores after a simulated server's delay.

    Args:
        tokens_per_s: the server's aggregate prompt throughput (tokens/s).
        latency_s: fixed extra time per request.
        replicas: servers in the pool (requests go to the least-loaded one).
        server: name of the shared server model.
        shared: ``"local"`` (one process) or ``"ray"`` (a named Ray actor, shared by all
            Ray workers of the cluster).
        tokens_scale: multiply the prompt's word count by this to get tokens.
    """

    def __init__(
        self,
        tokens_per_s: float = 1e9,
        latency_s: float = 0.0,
        *,
        replicas: int = 1,
        server: str = "camab-simulated-server",
        shared: str = "local",
        tokens_scale: float = 1.3,
    ) -> None:
        self.tokens_per_s = tokens_per_s
        self.latency_s = latency_s
        self.replicas = replicas
        self.server_name = server
        self.shared = shared
        self.tokens_scale = tokens_scale
        self._server: Any = None

    def _reserve(self, tokens: int) -> Any:
        if self._server is None:
            if self.shared == "ray":
                self._server = ray_server(
                    self.server_name, self.tokens_per_s, self.latency_s, self.replicas
                )
            else:
                self._server = local_server(
                    self.server_name, self.tokens_per_s, self.latency_s, self.replicas
                )
        caller = str(os.getpid())
        if self.shared == "ray":
            return self._server.reserve.remote(tokens, caller)
        return self._server.reserve(tokens, caller)

    def _tokens(self, result: ResponseLogprobs) -> int:
        return int(result.prompt_tokens * self.tokens_scale) + len(result.logprobs)

    def score(self, requests: Sequence[ScoreRequest]) -> list[ResponseLogprobs]:
        results = [keyword_logprobs(r) for r in requests]
        if self.latency_s or self.tokens_per_s < 1e9:
            reservations = [self._reserve(self._tokens(r)) for r in results]
            if self.shared == "ray":
                import ray

                reservations = ray.get(reservations)
            time.sleep(max(max(reservations) - time.time(), 0.0))
        return results

    async def ascore(self, requests: Sequence[ScoreRequest]) -> list[ResponseLogprobs]:
        results = [keyword_logprobs(r) for r in requests]
        if self.latency_s or self.tokens_per_s < 1e9:
            reservations = [self._reserve(self._tokens(r)) for r in results]
            if self.shared == "ray":
                reservations = list(await asyncio.gather(*reservations))
            await asyncio.sleep(max(max(reservations) - time.time(), 0.0))
        return results
