"""camab-rag: which retrieved chunks did the answer come from, and is it supported?

``Attributor(scorer=...)`` is the one door; ``attribute()`` scores each chunk (or
sentence) by how much it raises the likelihood of the answer under the chain's own LLM;
``cite`` turns that into cited answers; ``GroundednessFilter`` flags or blocks an
unsupported answer. The rest lives in its submodule: ``METHODS``, ``EarlyStop`` in
:mod:`camab_rag.methods`; ``BaseScorer``, ``ScoreRequest``, ``ResponseLogprobs``,
``ScoredBy``, ``TextGenerator`` in :mod:`camab_rag.scorers.base`; ``SourceDocument``,
``Segment``, ``segment_documents`` in :mod:`camab_rag.segments`; ``split_sentences`` in
:mod:`camab_rag.sentences`; ``TemplatePromptBuilder``, ``SpanRemovalPromptBuilder`` in
:mod:`camab_rag.prompts`; ``StatementAttribution`` in :mod:`camab_rag.result`;
``GaussianLinearPosterior`` in :mod:`camab_rag.posterior`; ``CitedAnswer``,
``citation_pairs`` in :mod:`camab_rag.citations`.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_LAZY: dict[str, str] = {
    "Attributor": "camab_rag.attributor",
    "attribute": "camab_rag.attributor",
    "aattribute": "camab_rag.attributor",
    "attribute_fn": "camab_rag.engine",
    "AttributionSettings": "camab_rag.settings",
    "AttributionResult": "camab_rag.result",
    "Scorer": "camab_rag.scorers.base",
    "default_scorer": "camab_rag.scorers",
    "TransformersScorer": "camab_rag.scorers",
    "OpenAICompletionsScorer": "camab_rag.scorers",
    "ProxyFallbackScorer": "camab_rag.scorers.proxy",
    "cite": "camab_rag.citations",
    "CitationRule": "camab_rag.citations",
    "GroundednessFilter": "camab_rag.groundedness",
    "assess_answer": "camab_rag.attributor",
    "aassess_answer": "camab_rag.attributor",
    "assess_groundedness": "camab_rag.groundedness",
}

__all__ = sorted([*_LAZY, "__version__"])

_MOVED: dict[str, str] = {
    **dict.fromkeys(
        ("BaseScorer", "ScoreRequest", "ResponseLogprobs", "ScoredBy", "TextGenerator"),
        "camab_rag.scorers.base",
    ),
    **dict.fromkeys(("EarlyStop", "METHODS"), "camab_rag.methods"),
    "GaussianLinearPosterior": "camab_rag.posterior",
    "StatementAttribution": "camab_rag.result",
    **dict.fromkeys(("Segment", "SourceDocument", "segment_documents"), "camab_rag.segments"),
    "split_sentences": "camab_rag.sentences",
    **dict.fromkeys(("TemplatePromptBuilder", "SpanRemovalPromptBuilder"), "camab_rag.prompts"),
    **dict.fromkeys(("CitedAnswer", "citation_pairs"), "camab_rag.citations"),
}  # names that left the top level at 0.x (CHANGELOG.md): where each lives now


def __getattr__(name: str) -> Any:
    module_name = _LAZY.get(name)
    if module_name is None:
        moved = _MOVED.get(name)
        hint = f": it moved, use `from {moved} import {name}` (CHANGELOG.md)" if moved else ""
        raise AttributeError(f"module 'camab_rag' has no attribute {name!r}{hint}")
    value = getattr(importlib.import_module(module_name), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
