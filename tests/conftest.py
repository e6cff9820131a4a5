"""Shared pytest fixtures.

``smollm2_scorer`` loads the embedded SmolLM2 model once for the whole test session (the
first run on a fresh machine converts the GGUF into the cache, about a minute; later runs
load it in seconds). Tests that use it should be marked ``@pytest.mark.model``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from camab_rag.scorers.transformers_scorer import TransformersScorer


@pytest.fixture(scope="session")
def smollm2_scorer() -> TransformersScorer:
    """The in-process scorer on the embedded SmolLM2-135M-Instruct (float32, CPU)."""
    from camab_rag.scorers import default_scorer

    return default_scorer()
