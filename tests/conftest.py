"""Shared pytest fixtures.

``smollm2_scorer`` loads the embedded SmolLM2 model once for the whole test session (the
first run on a fresh machine converts the GGUF into the cache, about a minute; later runs
load it in seconds). Tests that use it should be marked ``@pytest.mark.model``.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

# Before torch starts its OpenMP pool: idle threads sleep instead of spinning. With a vLLM
# server or other processes on the same 2 cores, spinning threads made every forward pass
# several times slower (measured: 8 short forwards 39 s spinning vs 7 s passive).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import pytest

if TYPE_CHECKING:
    from camab_rag.scorers.transformers_scorer import TransformersScorer


@pytest.fixture(scope="session")
def smollm2_scorer() -> TransformersScorer:
    """The in-process scorer on the embedded SmolLM2-135M-Instruct (float32, CPU)."""
    from camab_rag.scorers import default_scorer

    return default_scorer()
