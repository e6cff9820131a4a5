"""Scorer doubles for the pure-logic LlamaIndex tests (the model tests use SmolLM2)."""

from __future__ import annotations

import asyncio
import importlib.util
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from llama_index.core.base.response.schema import Response
from llama_index.postprocessor.camab import ATTRIBUTION_KEY

from camab_rag.scorers.base import BaseScorer, ResponseLogprobs, ScoreRequest, prompt_texts

REPO = Path(__file__).resolve().parents[3]


def repo_tests_module(filename: str) -> Any:
    """A helper module of camab-rag's own tests (``tests/<filename>`` at the repository
    root, e.g. the vLLM server or the chat-only server), loaded by its path."""
    path = REPO / "tests" / filename
    spec = importlib.util.spec_from_file_location(f"camab_tests_{path.stem}", path)
    if spec is None or spec.loader is None:
        raise FileNotFoundError(path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def answered(response: object) -> Response:
    """A query's result as the non-streaming ``Response`` it must be (fails the test if not)."""
    assert isinstance(response, Response), f"expected a Response, got {type(response).__name__}"
    return response


def attribution_info(response: object) -> dict[str, Any]:
    """The attribution record in a response's metadata (fails the test when it is missing)."""
    metadata = getattr(response, "metadata", None)
    assert isinstance(metadata, dict) and ATTRIBUTION_KEY in metadata, metadata
    info = metadata[ATTRIBUTION_KEY]
    assert isinstance(info, dict)
    return info


class PlantedScorer(BaseScorer):
    """Reward = -3 + 1 for each planted phrase present in the prompt (one token)."""

    def __init__(self, planted: Sequence[str], delay: float = 0.0) -> None:
        self.planted = list(planted)
        self.delay = delay
        self.prompts: list[str] = []

    def score(self, requests: Sequence[ScoreRequest]) -> list[ResponseLogprobs]:
        out = []
        for request in requests:
            text = "\n".join(prompt_texts(request.prompt))
            self.prompts.append(text)
            value = -3.0 + sum(1.0 for p in self.planted if p in text)
            out.append(ResponseLogprobs(np.array([value]), np.array([0], dtype=np.int64)))
        return out

    async def ascore(self, requests: Sequence[ScoreRequest]) -> list[ResponseLogprobs]:
        await asyncio.sleep(self.delay)
        return self.score(requests)


class FailingScorer(BaseScorer):
    def score(self, requests: Sequence[ScoreRequest]) -> list[ResponseLogprobs]:
        raise RuntimeError("scorer exploded on purpose")
