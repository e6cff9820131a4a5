"""The gate's score combined with cheap evidence: tried on FRANK ``valid``, shipped only if
it wins there.

A verdict is not an attribution, so it may combine signals: the issue names the context
gain with numbers and names absent from the context and lexical overlap. One combination,
chosen on ``valid`` only, before its ``test`` figure was computed: a logistic model
(scikit-learn's defaults, ``C=1``) over standardised :data:`FEATURES` (the shipped score
and the whole answer's explained share, both from the same two anchor calls, and three
free text signals), fitted on FRANK's CNN/DM ``valid`` summaries with SmolLM2. The rule:
it replaces the shipped score only if its ROC AUC on ``valid``, out of fold (5 folds
grouped by article), beats the shipped score's on the same folds. The ``test`` rows are
scored once, for the record, whatever the outcome. Each signal's share is its
standardised weight's share of the absolute weights.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GroupKFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from benchmarks.stats import auroc_ci, resamples
from benchmarks.stats import flag_auroc as auroc

FEATURES = ("min_sentence_explained", "explained", "lexical", "numbers", "names")
SHIPPED = "shipped"
FOLDS = 5
Figures = Mapping[str, NDArray[np.float64]]


@dataclass(frozen=True)
class Combination:
    """What the combination did on ``valid`` (out of fold) and, once, on ``test``."""

    folds_combined: list[float]
    folds_shipped: list[float]
    weights: dict[str, float]
    test: tuple[float, float, float]
    test_shipped: tuple[float, float, float]

    @property
    def wins(self) -> bool:
        return float(np.mean(self.folds_combined)) > float(np.mean(self.folds_shipped))

    @property
    def shares(self) -> dict[str, float]:
        total = sum(abs(w) for w in self.weights.values()) or 1.0
        return {name: abs(w) / total for name, w in self.weights.items()}


def _matrix(figures: Figures) -> NDArray[np.float64]:
    return np.column_stack([np.asarray(figures[name], dtype=float) for name in FEATURES])


def _model() -> Any:
    return make_pipeline(StandardScaler(), LogisticRegression(C=1.0))


def combine(
    valid: Figures,
    valid_unsupported: NDArray[np.bool_],
    valid_keys: Sequence[str],
    test: Figures,
    test_unsupported: NDArray[np.bool_],
    test_keys: Sequence[str],
) -> Combination:
    """Cross-validate the combination on ``valid`` (grouped by ``valid_keys``), then fit it
    on all of ``valid`` and score ``test`` once. Support = the model's log-odds of
    "supported"."""
    x, y = _matrix(valid), np.asarray(valid_unsupported, dtype=bool)
    combined, shipped = [], []
    for train, held in GroupKFold(FOLDS).split(x, y, np.asarray(valid_keys)):
        fold = _model().fit(x[train], ~y[train])
        combined.append(auroc(fold.decision_function(x[held]), y[held]))
        shipped.append(auroc(np.asarray(valid[SHIPPED])[held], y[held]))
    model = _model().fit(x, ~y)
    weights = dict(zip(FEATURES, (float(w) for w in model[-1].coef_[0])))
    draws = resamples(test_keys)
    labels = np.asarray(test_unsupported, dtype=bool)
    return Combination(
        combined,
        shipped,
        weights,
        auroc_ci(model.decision_function(_matrix(test)), labels, draws),
        auroc_ci(np.asarray(test[SHIPPED], dtype=float), labels, draws),
    )


def _pairs(result: Combination) -> str:
    pairs = zip(result.folds_combined, result.folds_shipped)
    return ", ".join(f"{a:.2f}/{b:.2f}" for a, b in pairs)


def combination_lines(result: Combination, valid_n: int, test_n: int) -> list[str]:
    """The report's paragraph on the combination."""
    shares = ", ".join(
        f"`{name}` {result.shares[name]:.0%} ({result.weights[name]:+.2f})" for name in FEATURES
    )
    verdict = (
        "It wins on valid, so it should replace the shipped score."
        if result.wins
        else "It does not win on valid, so the shipped score stays the gate's score."
    )
    return [
        "### The score combined with cheap evidence (tried, FRANK CNN/DM, SmolLM2)",
        "",
        "One combination, chosen on `valid` only before its `test` figure was computed "
        "(variants with fewer signals or a stronger penalty did no better on `valid`): a "
        "logistic model over "
        f"standardised {', '.join(f'`{n}`' for n in FEATURES)} (`names`: share of the "
        "summary's capitalised words found in the article), fitted on the "
        f"{valid_n} CNN/DM `valid` summaries; it ships only if its ROC AUC on `valid`, out "
        f"of fold ({FOLDS} folds grouped by article), beats the shipped score's on the same "
        "folds. Valid, mean over folds: combination "
        f"{np.mean(result.folds_combined):.3f}, shipped {np.mean(result.folds_shipped):.3f} "
        f"(per fold, combination/shipped: {_pairs(result)}). "
        f"{verdict} Each signal's share of the standardised weights (weight): {shares}. "
        f"On the {test_n} CNN/DM `test` summaries, scored once: combination ROC AUC "
        f"{result.test[0]:.3f} [{result.test[1]:.2f}, {result.test[2]:.2f}], shipped "
        f"{result.test_shipped[0]:.3f} [{result.test_shipped[1]:.2f}, "
        f"{result.test_shipped[2]:.2f}].",
        "",
    ]


__all__ = ["FEATURES", "Combination", "combination_lines", "combine"]
