"""``auto`` spends a budget it can use, and a run that leaves calls unspent says why
(review finding 9: on the README's example, 4 sentences in 3 documents, ``budget=8`` and
``budget=12`` both made 6 calls: a document-level leave-one-out, then the one
two-sentence document exactly)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import camab_rag
from camab_rag import AttributionSettings, attribute_fn
from camab_rag.methods.hierarchical import most_calls
from camab_rag.methods.registry import method_from_config

DOCS = [
    "The Eiffel Tower is in Paris. It opened in 1889.",
    "Bananas are yellow.",
    "Gustave Eiffel's company designed the tower.",
]
QUESTION = "Who designed the Eiffel Tower?"
ANSWER = "Gustave Eiffel's company designed it."


def test_the_readme_example_spends_its_budget_with_the_embedded_model(
    smollm2_scorer: Any,
) -> None:
    runs = {
        budget: camab_rag.attribute(QUESTION, DOCS, ANSWER, smollm2_scorer, budget=budget)
        for budget in (8, 12, 40)
    }
    for budget in (8, 12):  # 2**4 = 16 subsets: short of every one, so every call is spent
        result = runs[budget]
        assert (result.n_queries, result.n_evaluations) == (budget, budget)
        assert len({m.tobytes() for m in result.masks}) == budget
        assert not result.method_config.get("hierarchical")  # 6 calls was all it could
        assert "budget_left" not in result.method_config
        assert result.scores.shape == (4,) and np.all(np.isfinite(result.scores))
    exact = runs[40]  # every subset: 16 calls, and the result says why not 40
    assert exact.exact and exact.n_queries == 16
    assert exact.method_config["budget_left"] == {
        "calls": 24,
        "why": "every subset of the 4 units was scored (2**4 calls)",
    }
    again = camab_rag.AttributionResult.from_dict(exact.to_dict())
    assert again.method_config["budget_left"]["calls"] == 24
    refit = method_from_config(exact.method, exact.method_config)  # still a valid config
    np.testing.assert_allclose(refit.fit(exact.masks, exact.rewards), exact.scores, atol=1e-9)


def planted(mask: np.ndarray) -> float:
    return float(np.arange(1, mask.size + 1) @ mask) / 10.0 - 2.0


@pytest.mark.parametrize(
    ("groups", "budget", "bound"),
    [
        ([0, 0, 1, 2], 12, 4 + 3),  # D + 1 documents, then 2**2 - 1
        ([0, 0, 0, 0, 1, 1, 1, 1, 2, 2], 64, 4 + 1023),
        ([0] * 3 + [1] * 70, 64, 64),  # too many to enumerate: no bound under the budget
    ],
)
def test_the_bound_on_a_hierarchical_runs_calls(groups, budget, bound) -> None:
    assert most_calls(camab_rag.methods.Auto(), groups, budget) == bound


def test_a_hierarchical_run_that_stops_short_says_why() -> None:
    """A method run hierarchically on request keeps its plan; the result tells the
    developer what the budget left unspent and why."""
    result = attribute_fn(
        planted,
        4,
        budget=12,
        method="kernelshap",
        groups=[0, 0, 1, 2],
        settings=AttributionSettings(seed=3, hierarchical=True),
    )
    assert result.n_evaluations < 12
    left = result.method_config["budget_left"]
    assert left["calls"] == 12 - result.n_evaluations
    assert "hierarchical plan" in left["why"]
