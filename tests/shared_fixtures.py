"""Fixtures shared by the core's suite and the tools' suite (``tools/*/tests``): each
``conftest.py`` imports them from here, so the one loaded model is defined once.

``smollm2_scorer`` loads the embedded SmolLM2 model once for the whole test session (the
first run on a fresh machine converts the GGUF into the cache, about a minute; later runs
load it in seconds). Tests that use it should be marked ``@pytest.mark.model``.

``vllm_server`` is one real vLLM server for the session (:mod:`vllm_server`: the shared one
``scripts/run_tests.sh`` started, else one started here, about a minute); without
``.venv-vllm`` its tests are skipped, except in CI. Mark them ``@pytest.mark.server``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import TYPE_CHECKING

# Before torch starts its OpenMP pool: idle threads sleep instead of spinning. With a vLLM
# server or other processes on the same 2 cores, spinning threads made every forward pass
# several times slower (measured: 8 short forwards 39 s spinning vs 7 s passive).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import pytest
from vllm_server import VLLMServer, smollm2_server

if TYPE_CHECKING:
    from camab_rag.scorers.transformers_scorer import TransformersScorer


@pytest.fixture(scope="session")
def smollm2_scorer() -> TransformersScorer:
    """The in-process scorer on the embedded SmolLM2-135M-Instruct (float32, CPU)."""
    from camab_rag.scorers import default_scorer

    return default_scorer()


@pytest.fixture(scope="session")
def vllm_server() -> Iterator[VLLMServer]:
    """The embedded SmolLM2 served by vLLM on 127.0.0.1 as ``smollm2``."""
    with smollm2_server() as server:
        yield server
