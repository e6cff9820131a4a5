"""``CamabNodePostprocessor``: nodes re-ordered or filtered by the attribution they carry."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.schema import NodeWithScore, QueryBundle
from llama_index.postprocessor.camab.response import ATTRIBUTION_KEY
from llama_index.postprocessor.camab.score_filter import Missing, ScoreFilter, finite_number


class CamabNodePostprocessor(BaseNodePostprocessor):
    """Keep the nodes a first answer relied on, for "answer, attribute, re-answer".

    Takes the nodes a first answer was attributed to (no ``node_postprocessors=[...]`` entry:
    those run before the answer), by ``metadata["attribution"]["score"]``: ``top_k``,
    ``threshold``, ``missing`` (``"error"``, ``"keep"`` last, ``"drop"``) as
    :class:`~llama_index.postprocessor.camab.score_filter.ScoreFilter`.
    """

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
        ScoreFilter(top_k, threshold, missing)  # checks them
        if unknown := sorted(set(kwargs) - set(type(self).model_fields)):  # pydantic drops them
            raise TypeError(f"CamabNodePostprocessor() got an unexpected keyword {unknown[0]!r}")
        super().__init__(top_k=top_k, threshold=threshold, missing=missing, **kwargs)

    @classmethod
    def class_name(cls) -> str:
        return "CamabNodePostprocessor"

    def _postprocess_nodes(
        self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None = None
    ) -> list[NodeWithScore]:
        keep = ScoreFilter(self.top_k, self.threshold, self.missing)
        return keep(nodes, _score, _unscored)


def _score(nws: NodeWithScore) -> float | None:
    info = nws.node.metadata.get(ATTRIBUTION_KEY)
    return finite_number(info.get("score")) if isinstance(info, Mapping) else None


def _unscored(nws: NodeWithScore) -> ValueError:
    return ValueError(
        f"node {nws.node.node_id} carries no metadata['{ATTRIBUTION_KEY}']"
        "['score']: CamabNodePostprocessor needs nodes a first answer was attributed "
        "to, so it is not a node_postprocessors=[...] entry (those run before the "
        "answer). Attribute a first answer with CamabQueryEngine (or "
        "CamabEventHandler) and pass its response.source_nodes, or set "
        "missing='keep'/'drop'"
    )
