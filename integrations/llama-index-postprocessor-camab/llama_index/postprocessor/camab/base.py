"""``CamabNodePostprocessor``: nodes re-ordered or filtered by the attribution they carry."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Literal

from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.schema import NodeWithScore, QueryBundle
from llama_index.postprocessor.camab.answers import ATTRIBUTION_KEY

from camab_rag.errors import InputError

Missing = Literal["error", "keep", "drop"]


def finite_number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


class CamabNodePostprocessor(BaseNodePostprocessor):
    """Keep the nodes a first answer relied on, for "answer, attribute, re-answer": sorted
    by ``metadata["attribution"]["score"]``, those under ``threshold`` dropped, at most
    ``top_k`` kept; a node without a score raises (``missing="error"``), is kept last
    (``"keep"``) or dropped (``"drop"``)."""

    top_k: int | None = None
    threshold: float | None = None
    missing: Missing = "error"

    def __init__(
        self,
        top_k: int | None = None,
        threshold: float | None = None,
        *,
        missing: Missing = "error",
        **kwargs: Any,
    ) -> None:
        if top_k is not None and (type(top_k) is not int or top_k < 1):
            raise InputError(f"top_k must be a positive integer or None, got {top_k!r}")
        if threshold is not None and finite_number(threshold) is None:
            raise InputError(f"threshold must be a finite number or None, got {threshold!r}")
        if missing not in ("error", "keep", "drop"):
            raise InputError(f"missing must be 'error', 'keep' or 'drop', got {missing!r}")
        if unknown := sorted(set(kwargs) - set(type(self).model_fields)):  # pydantic drops them
            raise TypeError(f"CamabNodePostprocessor() got an unexpected keyword {unknown[0]!r}")
        super().__init__(top_k=top_k, threshold=threshold, missing=missing, **kwargs)

    @classmethod
    def class_name(cls) -> str:
        return "CamabNodePostprocessor"

    def _postprocess_nodes(
        self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None = None
    ) -> list[NodeWithScore]:
        scored = [(_score(node), node) for node in nodes]
        without = [node for value, node in scored if value is None]
        if without and self.missing == "error":
            raise ValueError(
                f"node {without[0].node.node_id} carries no metadata['{ATTRIBUTION_KEY}']"
                "['score']: CamabNodePostprocessor needs nodes a first answer was attributed "
                "to, so it is not a node_postprocessors=[...] entry (those run before the "
                "answer). Attribute a first answer with CamabQueryEngine (or "
                "CamabEventHandler) and pass its response.source_nodes, or set "
                "missing='keep'/'drop'"
            )
        ranked = sorted(((s, n) for s, n in scored if s is not None), key=lambda p: -p[0])
        kept = [n for s, n in ranked if self.threshold is None or s >= self.threshold]
        return kept[: self.top_k] + (without if self.missing == "keep" else [])


def _score(nws: NodeWithScore) -> float | None:
    info = nws.node.metadata.get(ATTRIBUTION_KEY)
    return finite_number(info.get("score")) if isinstance(info, Mapping) else None
