"""camab-rag: which retrieved chunks did the answer come from, and is it supported?

``Attributor(scorer=...)`` is the one door; ``attribute()`` scores each chunk (or
sentence) by how much it raises the likelihood of the answer under the chain's own LLM;
``cite`` turns that into cited answers; ``GroundednessFilter`` flags or blocks an
unsupported answer. Names that moved to a submodule (``_MOVED`` says where): ``METHODS``,
``BaseScorer``, ``ScoreRequest``, ``ResponseLogprobs``, ``ScoredBy``,
``SourceDocument``, ``Segment``, ``segment_documents``,
``split_sentences``, ``TemplatePromptBuilder``, ``SpanRemovalPromptBuilder``,
``StatementAttribution``, ``GaussianLinearPosterior``, ``CitedAnswer``, ``citation_pairs``.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"


def _by_module(names: dict[str, str]) -> dict[str, str]:
    return {
        name: f"camab_rag.{module}" for module, listed in names.items() for name in listed.split()
    }


_LAZY = _by_module(
    {
        "attributor": "Attributor attribute aattribute assess_answer aassess_answer",
        "engine": "attribute_fn",
        "settings": "AttributionSettings",
        "result": "AttributionResult",
        "scorers.base": "Scorer",
        "scorers": "default_scorer TransformersScorer OpenAICompletionsScorer",
        "scorers.proxy": "ProxyFallbackScorer",
        "citations": "cite CitationRule",
        "groundedness": "GroundednessFilter assess_groundedness",
    }
)
__all__ = sorted([*_LAZY, "__version__"])
_MOVED = _by_module(  # names that left the top level at 0.x (CHANGELOG.md): where each lives now
    {
        "scorers.base": "BaseScorer ScoreRequest ResponseLogprobs ScoredBy",
        "methods": "METHODS",
        "posterior": "GaussianLinearPosterior",
        "result": "StatementAttribution",
        "segments": "Segment SourceDocument segment_documents",
        "sentences": "split_sentences",
        "prompts": "TemplatePromptBuilder SpanRemovalPromptBuilder",
        "citations": "CitedAnswer citation_pairs",
    }
)


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
