"""``CamabNodePostprocessor``: nodes re-ordered or filtered by the attribution they carry."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

import numpy as np
from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.schema import NodeWithScore, QueryBundle
from llama_index.postprocessor.camab.response import ATTRIBUTION_KEY
from pydantic import Field

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

    top_k: int | None = Field(default=None, description="keep at most this many nodes")
    threshold: float | None = Field(default=None, description="minimum attribution score")
    missing: Literal["error", "keep", "drop"] = Field(default="error")

    def __init__(
        self,
        top_k: int | None = None,
        threshold: float | None = None,
        *,
        missing: Literal["error", "keep", "drop"] = "error",
        **kwargs: Any,
    ) -> None:
        if top_k is not None and (
            isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1
        ):
            raise InputError(f"top_k must be a positive integer or None, got {top_k!r}")
        if threshold is not None and (
            isinstance(threshold, bool)
            or not isinstance(threshold, (int, float))
            or not np.isfinite(threshold)
        ):
            raise InputError(f"threshold must be a finite number or None, got {threshold!r}")
        if missing not in ("error", "keep", "drop"):
            raise InputError(f"missing must be 'error', 'keep' or 'drop', got {missing!r}")
        super().__init__(top_k=top_k, threshold=threshold, missing=missing, **kwargs)

    @classmethod
    def class_name(cls) -> str:
        return "CamabNodePostprocessor"

    def _postprocess_nodes(
        self,
        nodes: list[NodeWithScore],
        query_bundle: QueryBundle | None = None,
    ) -> list[NodeWithScore]:
        attributed: list[tuple[float, NodeWithScore]] = []
        unattributed: list[NodeWithScore] = []
        for nws in nodes:
            score = _attribution_score(nws)
            if score is not None:
                attributed.append((score, nws))
            elif self.missing == "error":
                raise ValueError(
                    f"node {nws.node.node_id} carries no metadata['{ATTRIBUTION_KEY}']['score']: "
                    "CamabNodePostprocessor needs nodes a first answer was attributed to, so "
                    "it is not a node_postprocessors=[...] entry (those run before the "
                    "answer). Attribute a first answer with CamabQueryEngine (or "
                    "CamabEventHandler) and pass its response.source_nodes, or set "
                    "missing='keep'/'drop'"
                )
            elif self.missing == "keep":
                unattributed.append(nws)
        ranked = [n for _, n in sorted(attributed, key=lambda pair: -pair[0])]
        if self.threshold is not None:
            ranked = [n for n in ranked if (_attribution_score(n) or 0.0) >= self.threshold]
        if self.top_k is not None:
            ranked = ranked[: self.top_k]
        return ranked + unattributed


def _attribution_score(nws: NodeWithScore) -> float | None:
    info = nws.node.metadata.get(ATTRIBUTION_KEY)
    if not isinstance(info, Mapping):
        return None
    score = info.get("score")
    if isinstance(score, bool) or not isinstance(score, (int, float)):
        return None
    return float(score)
