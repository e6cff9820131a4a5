"""Real scorers: an in-process transformers model and an OpenAI-compatible HTTP server,
and :func:`resolve_scorer`, the one rule that picks a scorer; each imported on first access.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from camab_rag.scorers.openai_completions import OpenAICompletionsScorer
    from camab_rag.scorers.proxy import resolve_scorer
    from camab_rag.scorers.transformers_scorer import TransformersScorer

_LAZY: dict[str, str] = {
    "TransformersScorer": "camab_rag.scorers.transformers_scorer",
    "OpenAICompletionsScorer": "camab_rag.scorers.openai_completions",
    "resolve_scorer": "camab_rag.scorers.proxy",
}

__all__ = ["OpenAICompletionsScorer", "TransformersScorer", "default_scorer", "resolve_scorer"]


def default_scorer(**kwargs: Any) -> TransformersScorer:
    """The in-process scorer on the embedded SmolLM2-135M-Instruct (``kwargs``: its options)."""
    from camab_rag.scorers.transformers_scorer import TransformersScorer

    return TransformersScorer("smollm2", **kwargs)


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'camab_rag.scorers' has no attribute {name!r}")
    value = globals()[name] = getattr(importlib.import_module(_LAZY[name]), name)
    return value
