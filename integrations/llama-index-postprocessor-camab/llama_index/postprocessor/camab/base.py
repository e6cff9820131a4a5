"""``CamabNodePostprocessor``: nodes re-ordered or filtered by the attribution they carry."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Literal

from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.schema import NodeWithScore, QueryBundle
from llama_index.postprocessor.camab.response import ATTRIBUTION_KEY

from camab_rag.integration import InputError


class CamabNodePostprocessor(BaseNodePostprocessor):
    """Re-order or filter nodes by the attribution they carry.

    For the second pass of "answer, attribute, re-answer from the supporting nodes": it
    works on nodes a first answer was attributed to (not a ``node_postprocessors=[...]``
    entry, which runs before the answer), sorted by ``metadata["attribution"]["score"]``
    (stable), those under ``threshold`` dropped, at most ``top_k`` kept.

    Args:
        top_k: keep at most this many nodes (``None`` = all).
        threshold: drop nodes whose attribution score is below this (``None`` = none).
        missing: what to do with a node that carries no attribution: ``"error"`` (default,
            a clear ``ValueError``), ``"keep"`` (placed after attributed nodes, never
            filtered) or ``"drop"``.
    """

    top_k: int | None = None
    threshold: float | None = None
    missing: Literal["error", "keep", "drop"] = "error"

    def __init__(
        self,
        top_k: int | None = None,
        threshold: float | None = None,
        *,
        missing: Literal["error", "keep", "drop"] = "error",
        **kwargs: Any,
    ) -> None:
        if top_k is not None and (type(top_k) is not int or top_k < 1):
            raise InputError(f"top_k must be a positive integer or None, got {top_k!r}")
        if threshold is not None and _number(threshold) is None:
            raise InputError(f"threshold must be a finite number or None, got {threshold!r}")
        if missing not in ("error", "keep", "drop"):
            raise InputError(f"missing must be 'error', 'keep' or 'drop', got {missing!r}")
        super().__init__(top_k=top_k, threshold=threshold, missing=missing, **kwargs)

    @classmethod
    def class_name(cls) -> str:
        return "CamabNodePostprocessor"

    def _postprocess_nodes(
        self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None = None
    ) -> list[NodeWithScore]:
        scored = [(_score(n), n) for n in nodes]
        unscored = [n for score, n in scored if score is None]
        if unscored and self.missing == "error":
            raise ValueError(
                f"node {unscored[0].node.node_id} carries no metadata['{ATTRIBUTION_KEY}']"
                "['score']: CamabNodePostprocessor needs nodes a first answer was attributed "
                "to, so it is not a node_postprocessors=[...] entry (those run before the "
                "answer). Attribute a first answer with CamabQueryEngine (or "
                "CamabEventHandler) and pass its response.source_nodes, or set "
                "missing='keep'/'drop'"
            )
        ranked = sorted(((s, n) for s, n in scored if s is not None), key=lambda p: -p[0])
        kept = [n for s, n in ranked if self.threshold is None or s >= self.threshold]
        return kept[: self.top_k] + (unscored if self.missing == "keep" else [])


def _score(nws: NodeWithScore) -> float | None:
    info = nws.node.metadata.get(ATTRIBUTION_KEY)
    return _number(info.get("score")) if isinstance(info, Mapping) else None


def _number(value: Any) -> float | None:
    """``value`` as a finite float (``None`` for anything else, booleans included)."""
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    return float(value) if ok else None
