"""``auto`` on a few documents (issue 51): when the budget affords every document left
out once (``D + 1`` calls), the run opens with it, on one level (chunks) and as the first
level of a hierarchical run (sentences)."""

from __future__ import annotations

import numpy as np
import pytest

from camab_rag import AttributionSettings, attribute, attribute_fn
from camab_rag.methods import Auto
from camab_rag.methods.auto import AutoSampler

SHOP = [
    "The Aero electric kettle boils 1.7 litres in three minutes. The Aero kettle costs "
    "49 euros and comes in white and black.",
    "Price update: from March the Aero kettle now costs 59 euros, because steel became "
    "more expensive.",
    "Our annual staff picnic is on 14 June in the city park. Families are welcome.",
    "Staff may park behind the warehouse. Visitors use the street parking on Riia street.",
    "Glass teapot: 29 euros.",
    "Lumora is a family business based in Tartu. We sell kettles, teapots and cups.",
]
PARKING = 3


def leave_one_out(n: int) -> np.ndarray:
    rows = np.ones((n + 1, n), dtype=bool)
    rows[np.arange(1, n + 1), np.arange(n)] = False
    return rows


def planted(mask: np.ndarray) -> float:
    return float(np.array([0.1, 0.0, 0.0, 1.0, 0.0, 0.05]) @ mask[:6]) - 2.0


@pytest.mark.parametrize(("granularity", "n"), [("chunk", 6), ("sentence", 11)])
def test_six_documents_at_eight_calls_open_with_each_left_out_once(granularity, n) -> None:
    groups = list(range(6)) if n == 6 else [0, 0, 1, 2, 2, 3, 3, 4, 5, 5, 5]
    result = attribute_fn(
        lambda m: planted(np.array([m[groups.index(d)] for d in range(6)])),
        n,
        budget=8,
        groups=groups,
        settings=AttributionSettings(seed=1),
    )
    documents = leave_one_out(6)[:, groups]
    np.testing.assert_array_equal(result.masks[:7], documents)
    assert result.n_queries == 8


def test_below_d_plus_one_calls_nothing_changes() -> None:
    old = Auto._variant(document_opening=False)
    groups = list(range(6))
    runs = [
        attribute_fn(
            planted, 6, budget=6, method=m, groups=groups, settings=AttributionSettings(seed=2)
        )
        for m in (None, old)
    ]
    np.testing.assert_array_equal(runs[0].masks, runs[1].masks)


def test_the_one_level_opening_is_kernelshaps_unless_the_units_are_documents() -> None:
    rng = np.random.default_rng(0)

    def opening(n: int, budget: int, documents: bool) -> np.ndarray | None:
        return AutoSampler(Auto().one_level(documents), n, budget, rng).opening

    assert opening(6, 8, False) is None  # 6 rows < N + 1
    np.testing.assert_array_equal(opening(6, 8, True), leave_one_out(6))
    more = opening(6, 20, True)
    assert more is not None and more.shape[0] == 15  # KernelSHAP's 15 rows fit: as before
    assert not more[0].any() and more[1].all()
    assert opening(20, 16, False) is None  # 12 rows < 21: Thompson draws alone, as before


@pytest.mark.model
@pytest.mark.parametrize("granularity", ["chunk", "sentence"])
def test_the_parking_answer_credits_the_parking_page_alone_at_eight_calls(
    smollm2_scorer, granularity
) -> None:
    """A fresh user's case: 6 shop pages, budget 8. Before, Thompson draws alone left the
    parking and picnic pages collinear (chunks: +2.0 and -2.0) or credited nothing
    (sentences: parking 0.0)."""
    answer = "Visitors use the street parking on Riia street."
    result = attribute(
        "Where can visitors park?", SHOP, answer, smollm2_scorer, budget=8, granularity=granularity
    )
    scores = np.asarray(result.document_scores)
    assert int(np.argmax(scores)) == PARKING
    others = np.delete(scores, PARKING)
    assert np.abs(others).max() < 0.25 * scores[PARKING]
