"""camab-rag: which retrieved chunks did the answer come from?

CAMAB context attribution (Linear Thompson Sampling over context subsets, ACL 2026
Findings) scored by the chain's own LLM, with same-budget baselines.

Heavy scorers (torch, HTTP clients) are imported lazily, so ``import camab_rag`` stays
light.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

# public name -> module that defines it (imported on first access)
_LAZY: dict[str, str] = {
    "attribute": "camab_rag.engine",
    "aattribute": "camab_rag.engine",
    "attribute_fn": "camab_rag.engine",
    "AttributionResult": "camab_rag.result",
    "StatementAttribution": "camab_rag.result",
    "Segment": "camab_rag.segments",
    "SourceDocument": "camab_rag.segments",
    "segment_documents": "camab_rag.segments",
    "split_sentences": "camab_rag.sentences",
    "EarlyStop": "camab_rag.methods.camab",
    "GaussianLinearPosterior": "camab_rag.posterior",
    "METHODS": "camab_rag.methods",
    "Scorer": "camab_rag.scoring",
    "BaseScorer": "camab_rag.scoring",
    "ScoreRequest": "camab_rag.scoring",
    "ResponseLogprobs": "camab_rag.scoring",
    "TextGenerator": "camab_rag.scoring",
    "ScoredBy": "camab_rag.scoring",
    "ProxyFallbackScorer": "camab_rag.scorers.proxy",
    "TemplatePromptBuilder": "camab_rag.prompts",
    "SpanRemovalPromptBuilder": "camab_rag.prompts",
    "default_scorer": "camab_rag.scorers",
    "TransformersScorer": "camab_rag.scorers",
    "OpenAICompletionsScorer": "camab_rag.scorers",
    "cite": "camab_rag.citations",
    "citation_pairs": "camab_rag.citations",
    "CitationRule": "camab_rag.citations",
    "CitedAnswer": "camab_rag.citations",
    "assess_groundedness": "camab_rag.groundedness",
    "GroundednessFilter": "camab_rag.groundedness",
    "AttributionSettings": "camab_rag.settings",
    "attribute_captured": "camab_rag.captured",
    "aattribute_captured": "camab_rag.captured",
}

__all__ = sorted([*_LAZY, "__version__"])


def __getattr__(name: str) -> Any:
    module_name = _LAZY.get(name)
    if module_name is None:
        raise AttributeError(f"module 'camab_rag' has no attribute {name!r}")
    value = getattr(importlib.import_module(module_name), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
