"""``auto`` never leaves two units with identical mask columns when the budget can tell
them apart (review finding 4: at budget 12 over 7 documents two documents were in or out
together in every subset, so every fit gave them the same score)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from camab_rag import AttributionResult, AttributionSettings, attribute_fn
from camab_rag.methods.auto import separate_ties


def tied_pairs(masks: np.ndarray) -> list[tuple[int, int]]:
    first: dict[bytes, int] = {}
    pairs = []
    for unit, column in enumerate(np.asarray(masks, dtype=bool).T):
        key = column.tobytes()
        if key in first:
            pairs.append((first[key], unit))
        first.setdefault(key, unit)
    return pairs


def linear(weights: np.ndarray) -> Callable[[np.ndarray], float]:
    return lambda mask: float(np.asarray(mask, dtype=float) @ weights[: len(mask)])


def run(n: int, budget: int, seed: int, documents: bool, weights: np.ndarray) -> AttributionResult:
    return attribute_fn(
        linear(weights),
        n,
        budget=budget,
        groups=list(range(n)) if documents else None,
        settings=AttributionSettings(seed=seed),
    )


def test_seven_documents_at_twelve_calls_are_told_apart() -> None:
    weights = np.random.default_rng(2).normal(size=7)  # the run that tied documents 4 and 5
    result = run(7, 12, 0, True, weights)
    assert result.masks.shape == (12, 7)
    assert tied_pairs(result.masks) == []
    assert len(np.unique(result.scores)) == 7


@pytest.mark.parametrize("documents", [True, False])
def test_no_identical_columns_when_the_budget_allows(documents: bool) -> None:
    """A grid of (budget, N) on one level (whole documents, or one document's sentences,
    where small budgets take the random halves): whenever ``2 ** budget >= N`` no two
    columns are identical once the run ends. Each (budget, N) cell is one case; sentences
    (ten times the CPU of documents) run one seed of each, documents three."""
    checked = 0
    for n in (2, 3, 5, 6, 7, 8, 11, 12, 20, 40):
        for budget in (3, 4, 6, 8, 9, 10, 12, 13, 16, 19, 24):
            if 2**budget < n or 2**n <= budget:
                continue
            for seed in range(3 if documents else 1):
                weights = np.random.default_rng(seed).normal(size=n)
                result = run(n, budget, seed, documents, weights)
                assert result.masks.shape[0] == budget
                assert tied_pairs(result.masks) == [], (n, budget, seed)
                assert len({m.tobytes() for m in result.masks}) == budget
                checked += 1
    assert checked == (258 if documents else 86)


def test_separate_ties_moves_only_what_the_rows_left_need() -> None:
    rng = np.random.default_rng(0)
    seen = np.array([[1, 1, 0, 0, 0, 0], [0, 0, 1, 1, 0, 0]], dtype=bool)  # 3 tied pairs
    drawn = np.array([[1, 1, 0, 0, 1, 1]], dtype=bool)  # splits none of them
    with_room = separate_ties(seen, drawn, 1, rng, lambda row, _: row)
    np.testing.assert_array_equal(with_room, drawn)  # the row after it can still split them
    last = separate_ties(seen, drawn, 0, rng, lambda row, _: row)
    assert tied_pairs(np.concatenate([seen, last])) == []
    assert int((last != drawn).sum()) == 3  # one unit of each pair moved, nothing else
