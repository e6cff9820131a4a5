"""The chat model under LangChain's standard suites (``langchain-tests``): the embedded
SmolLM2, loaded once per process and shared by the unit and integration classes."""

from __future__ import annotations

import functools
from typing import Any

MAX_NEW_TOKENS = 8  # the standard tests check shapes and types, not answers: keep them short


@functools.cache
def smollm2() -> Any:
    from camab_rag.scorers import default_scorer

    return default_scorer()


def chat_model_params() -> dict[str, Any]:
    return {"generator": smollm2(), "max_new_tokens": MAX_NEW_TOKENS}
