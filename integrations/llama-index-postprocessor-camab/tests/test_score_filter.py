"""Keeping the nodes an answer relied on (``CamabNodePostprocessor``): sorted by score (ties
in input order), a threshold, a top_k, nodes without a score raised, kept last or dropped;
bad options are typed errors."""

from __future__ import annotations

from typing import Any

import pytest
from llama_index.core.schema import NodeWithScore, TextNode
from llama_index.postprocessor.camab.base import CamabNodePostprocessor, finite_number

from camab_rag.errors import InputError

SCORES = {"a": 0.1, "b": 0.7, "c": -0.2, "d": 0.4, "e": 0.4, "plain": None}


def node(name: str) -> NodeWithScore:
    score = SCORES[name]
    metadata = {} if score is None else {"attribution": {"score": score}}
    return NodeWithScore(node=TextNode(text=name, id_=name, metadata=metadata))


def keep(names: str, **options: Any) -> list[str]:
    kept = CamabNodePostprocessor(**options).postprocess_nodes([node(n) for n in names.split()])
    return [n.node.get_content() for n in kept]


def test_nodes_are_sorted_thresholded_and_cut() -> None:
    assert keep("a b c d e") == ["b", "d", "e", "a", "c"]
    assert keep("a b c d e", top_k=2) == ["b", "d"]
    assert keep("e d", top_k=1) == ["e"]  # a tie keeps the input order
    assert keep("a b c d", threshold=0.1) == ["b", "d", "a"]
    assert keep("a b c d", top_k=1, threshold=0.0) == ["b"]
    assert keep("a b", threshold=5.0) == []


def test_a_node_without_a_score_raises_stays_last_or_goes() -> None:
    with pytest.raises(ValueError, match="node plain carries no metadata"):
        keep("plain a")
    assert keep("plain a c", top_k=1, missing="keep") == ["a", "plain"]
    assert keep("plain a", missing="drop") == ["a"]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"top_k": 0}, "top_k must be a positive integer"),
        ({"top_k": True}, "top_k"),
        ({"threshold": float("nan")}, "threshold must be a finite number"),
        ({"threshold": "high"}, "threshold"),
        ({"missing": "ignore"}, "missing must be 'error', 'keep' or 'drop'"),
    ],
)
def test_bad_options_are_typed_errors(options: dict[str, Any], message: str) -> None:
    with pytest.raises(InputError, match=message):
        CamabNodePostprocessor(**options)


def test_only_finite_numbers_are_scores() -> None:
    assert finite_number(2) == 2.0 and finite_number(-0.5) == -0.5
    assert [finite_number(v) for v in (True, float("inf"), "1", None)] == [None] * 4
