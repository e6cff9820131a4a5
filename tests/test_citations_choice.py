"""The citation rule ``cite()`` ships is the one the benchmark's dev procedure chooses.

Replays the stored HotpotQA citation rows (``benchmarks/results/citations``): no model.
"""

from __future__ import annotations

import json

import pytest

from camab_rag.citations import CitationRule
from camab_rag.render.support import CITE_ABOVE, CITE_AT, support_words

bench = pytest.importorskip("benchmarks.bench_citations")


def test_the_default_rule_is_a_candidate() -> None:
    assert bench.SHIPPED == (
        "best unrelated, 0.05, relative 0, or the holder of the numbers and names from "
        "the median unrelated"
    )
    assert CitationRule().threshold == CITE_ABOVE == 0.05
    assert CitationRule().relative == 0.0
    # the words keep their own scale: a cited source may read "weak support"
    assert CITE_AT == 0.11 and support_words(0.08) == "weak support"


def _rows() -> dict[str, dict[str, object]]:
    from benchmarks.data import dataset_path

    try:
        path = dataset_path("hotpotqa")
    except Exception as error:  # no benchmark data here
        pytest.skip(f"HotpotQA data not available: {error}")
    with path.open(encoding="utf-8") as handle:
        return {row["id"]: row for row in map(json.loads, handle)}


def test_dev_choice_is_what_ships() -> None:
    rows = _rows()
    stored = bench.RESULTS / "smollm2_hotpotqa.jsonl"
    dev = bench.stored_items(stored, dev=True)
    old_correct = bench.dev_items(bench.RESULTS / "smollm2.jsonl", rows, correct_only=True)
    assert len(dev) >= 25 and len(old_correct) >= 17
    chosen, _table = bench.choice(dev[: bench.CHOSEN_ON], old_correct)
    assert chosen == bench.SHIPPED
    assert bench.agreement(chosen).endswith("the same (`CitationRule()`'s defaults).")
    # the held-out rows keep the targets with the shipped rule
    held = bench.stored_items(stored, dev=False)
    true, false, _gold, with_distractor = bench.counts(bench.default_rule, held)
    assert true >= 0.9 * (true + false) and with_distractor <= 0.10 * len(held)


def test_a_disagreement_is_said() -> None:
    assert "**they disagree**" in bench.agreement("best unrelated, 0.3, relative 0.25")
