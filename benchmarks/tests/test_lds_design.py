"""The budget rule's search in ``lds-design`` (pure logic, no model)."""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np

from benchmarks import bench_lds, lds_design, lds_titles
from benchmarks.bench_lds import Case
from benchmarks.lds_design import KEYS, Rule, _arrays, _objective, shipped_rule
from benchmarks.lds_titles import BEFORE
from camab_rag.methods.auto import TWO_DRAWS_FROM


def objective(found: list[Case], table: list[Cells], rule: Rule) -> float:
    return _objective(_arrays(found, table), rule)


def case(n: int, n_docs: int, ident: str) -> Case:
    lds_design._DOCS[("test", ident)] = n_docs
    record: dict[str, Any] = {"id": ident, "n_segments": n}
    return Case("test", record, None)  # type: ignore[arg-type]


def test_the_rule_picks_each_regimes_variant_by_calls_per_unit() -> None:
    rule = Rule(halves=0.0, joint=0.5, one_document=1.0, estimator="LASSO")
    hotpot, cnn, chunks = case(40, 10, "h"), case(20, 1, "c"), case(6, 6, "k")
    assert [rule.key(hotpot, b) for b in (8, 16, 32)] == [
        "documents-first-joint",
        "documents-first-joint",
        "documents-first",
    ]
    assert [rule.key(cnn, b) for b in (8, 16, 32)] == [
        "halves-lasso",
        "halves-lasso",
        "documents-first",
    ]
    assert rule.key(chunks, 3) == "documents-first"  # one level: never the joint fit


Cells = dict[tuple[str, str], dict[str, float]]


def every_variant(budgets: tuple[int, ...], **picked: dict[str, float]) -> Cells:
    """One example's cells: 0.0 for every variant a rule picks from at ``budgets``, but
    ``picked`` (``key_budget`` with ``-`` as ``_``: the metrics of that cell)."""
    cells: Cells = {
        (key, str(b)): {"lds_bernoulli": 0.0, "lds_keep": 0.0} for key in KEYS for b in budgets
    }
    for name, values in picked.items():
        key, _, budget = name.rpartition("_")
        cells[(key.replace("_", "-"), budget)] = values
    return cells


def test_the_objective_reads_each_example_under_its_own_regime() -> None:
    """The vectorised objective picks, per example and budget, the variant of
    :meth:`Rule.key`: one document and several documents under their own cuts."""
    found = [case(20, 1, "c3"), case(40, 10, "h3")]
    cells = [
        every_variant(
            (8, 16),
            halves_lasso_8={"lds_bernoulli": 0.9, "lds_keep": 0.7},
            adaptive_lasso_16={"lds_bernoulli": 0.5, "lds_keep": 0.5},
        ),
        every_variant(
            (8, 16),
            documents_first_joint_8={"lds_bernoulli": 0.3, "lds_keep": 0.5},
            documents_first_16={"lds_bernoulli": 0.7, "lds_keep": 0.1},
        ),
    ]
    rule = Rule(0.0, 0.25, 0.5, "LASSO", above=0.5)
    by_hand = np.mean([(0.9 + 0.3) / 2, (0.7 + 0.5) / 2, (0.5 + 0.7) / 2, (0.5 + 0.1) / 2])
    assert np.isclose(objective(found, cells, rule), by_hand)
    for b in (8, 16):
        assert [rule.key(c, b) for c in found] == (
            ["halves-lasso", "documents-first-joint"]
            if b == 8
            else ["adaptive-lasso", "documents-first"]
        )


def test_the_objective_averages_budgets_and_samples_over_examples() -> None:
    rule = Rule(halves=0.0, joint=0.0, one_document=1.0, estimator="flat")
    found = [case(20, 1, "a"), case(20, 1, "b")]
    nan = float("nan")
    cells = [
        every_variant(
            (8, 32),
            halves_flat_8={"lds_bernoulli": 0.2, "lds_keep": 0.4},
            documents_first_32={"lds_bernoulli": 0.8, "lds_keep": nan},
        ),
        every_variant((8,), halves_flat_8={"lds_bernoulli": 0.4, "lds_keep": 0.6}),
    ]
    assert np.isclose(objective(found, cells, rule), np.mean([0.3, 0.5, 0.8]))


def test_every_rule_is_read_on_the_examples_every_variant_has() -> None:
    """An example whose adaptive LASSO fit is not priced yet counts for no rule at that
    budget: a rule that picks it is not read on the other examples alone."""
    found = [case(20, 1, "d"), case(20, 1, "e")]
    cells = [
        every_variant((8,), halves_lasso_8={"lds_bernoulli": 0.2, "lds_keep": 0.2}),
        every_variant((8,), halves_lasso_8={"lds_bernoulli": 0.6, "lds_keep": 0.6}),
    ]
    del cells[0][("adaptive-lasso", "8")]
    halves = Rule(0.0, 0.0, 1.0, "LASSO")
    assert np.isclose(objective(found, cells, halves), 0.6)
    assert np.isclose(objective(found, cells, Rule(0.0, 0.0, 0.0, "LASSO", above=0.0)), 0.0)


def test_the_shipped_rule_is_autos_defaults() -> None:
    assert shipped_rule() == Rule(
        halves=0.0,
        joint=0.25,
        one_document=0.25,
        estimator="LASSO",
        above=0.0,
        high="adaptive-lasso",
    )


def short_case(n: int, n_docs: int, ident: str, words: int) -> Case:
    found = case(n, n_docs, ident)
    found.record["response"] = " ".join(["word"] * words)
    return found


def test_several_documents_read_the_prior_only_for_short_answers_under_the_cut() -> None:
    short, long_ = short_case(40, 10, "p", 2), short_case(40, 10, "q", 5)
    assert lds_design._several_key(short, 16, 2, 1.0) == (lds_design.FLAT_LEXICAL, "16")
    assert lds_design._several_key(short, 41, 2, 1.0) == ("auto-no-lexical", "41")
    assert lds_design._several_key(long_, 16, 2, 1.0) == ("auto-no-lexical", "16")


def test_a_file_priced_after_the_choice_is_read_on_all_rows_alone() -> None:
    """A file outside :data:`lds_design.DEV_ROWS` has no dev rows: the target table reads it
    on all its rows (no 'other half' of a choice it never entered), with the best peer's
    gap."""
    found = [case(20, 1, "f1"), case(20, 1, "f2")]
    rule = shipped_rule()
    table = []
    for c, (ours, peer) in zip(found, [(0.8, 0.5), (0.6, 0.7)]):
        cells: Cells = {("auto", "8"): {"lds_bernoulli": ours}}
        cells[("contextcite", "8")] = {"lds_bernoulli": peer}
        cells[(rule.key(c, 8), "8")] = {"lds_bernoulli": ours}
        cells[("auto-adaptive", "8")] = {"lds_bernoulli": 0.0}
        table.append(cells)
    text, words = lds_design.target_table({"fresh": ([], [])}, {"fresh": (found, table)}, rule)
    rows = [line for line in text.splitlines() if line.startswith("| fresh")]
    assert words.startswith("On all rows 0 cells miss the target")
    assert len(rows) == 1 and "| all | 8 | LDS, Bernoulli ½ | 2 |" in rows[0]
    assert "ContextCite-style 0.600 | +0.100 | yes | -2.441 to +2.641: on it |" in rows[0]


def test_a_gap_is_settled_only_where_its_interval_clears_the_line() -> None:
    """The target table's interval: ``auto`` minus the peer, paired by example (a missing
    cell drops its example), read against the 0.02 line."""

    def table(gaps: list[float]) -> list[Cells]:
        return [
            {("auto", "64"): {"lds_keep": 0.5 + g}, ("contextcite", "64"): {"lds_keep": 0.5}}
            for g in gaps
        ]

    below = [*table([-0.10, -0.11, -0.12]), {("auto", "64"): {"lds_keep": 0.9}}]
    assert lds_design._gap_interval(below, 64, "lds_keep", "contextcite") == (
        "-0.135 to -0.085: below",
        "below",
    )
    above = lds_design._gap_interval(table([0.10, 0.11, 0.12]), 64, "lds_keep", "contextcite")
    assert above == ("+0.085 to +0.135: above", "above")
    straddles = lds_design._gap_interval(table([0.05, -0.05, 0.0]), 64, "lds_keep", "contextcite")
    assert straddles[1] == "on it"
    assert lds_design._gap_interval(table([0.1]), 64, "lds_keep", "contextcite")[1] == "unknown"
    found = [case(20, 10, f"g{i}") for i in range(6)]
    part = {"f": (found, table([-0.10, -0.11, -0.12, 0.05, -0.05, 0.0]))}
    _, words = lds_design.target_table({"f": ([], [])}, part, shipped_rule())
    assert words.startswith("On all rows 1 cell misses the target;")
    assert "wholly below the line in 0 of them" in words  # six rows straddle the line
    part = {"f": (found[:3], table([-0.10, -0.11, -0.12]))}
    _, words = lds_design.target_table({"f": ([], [])}, part, shipped_rule())
    assert (
        "1 cell misses the target; the 95% interval of the gap lies wholly below the line in 1 "
        in words
    )


def halves_part(found: list[Case], halves: float) -> dict[str, tuple[list[Case], list[Cells]]]:
    """One file whose examples read ``halves`` on the random halves at every budget, 0.5
    without the switch and 0.4 for ContextCite-style (both target samples)."""
    table: list[Cells] = []
    for _ in found:
        cells: Cells = {}
        for b in (8, 16, 32, 64):
            cells[(lds_design.LIKELY, str(b))] = {"lds_bernoulli": 0.5, "lds_keep": 0.5}
            for key in ("halves-lasso", lds_design.AUTO_HALVES):  # ContextCite's fit, auto's
                cells[(key, str(b))] = {"lds_bernoulli": halves, "lds_keep": halves}
            cells[("contextcite", str(b))] = {"lds_bernoulli": 0.4, "lds_keep": 0.4}
        table.append(cells)
    return {"f": (found, table)}


def test_short_answers_take_the_halves_only_when_the_dev_rows_say_so() -> None:
    """The halves sweep: a one-word answer over several documents reads the random halves
    from ``c * (N + 1)`` calls on; the chosen (T, c) beats ``auto``'s own dev objective
    without a new missed cell, else ``auto`` as shipped (never) stays."""
    short, long_ = short_case(40, 10, "s1", 1), short_case(40, 10, "s2", 9)
    assert lds_design._short_halves_key(short, 64, 1, 1.25) == ("halves-lasso", "64")
    assert lds_design._short_halves_key(short, 32, 1, 1.25) == (lds_design.LIKELY, "32")
    assert lds_design._short_halves_key(long_, 64, 1, 1.25) == (lds_design.LIKELY, "64")

    def part(halves: float) -> dict[str, tuple[list[Case], list[Cells]]]:
        return halves_part([short_case(40, 10, f"h{i}", 1) for i in range(2)], halves)

    _, better = lds_design.short_halves_sweep(part(0.9), part(0.9))
    assert better == (1, 0.25)  # the fewest words, the earliest cut
    _, worse = lds_design.short_halves_sweep(part(0.1), part(0.1))
    assert worse == lds_design.SHORT_HALVES == (0.0, math.inf)


def test_an_unlikely_answer_takes_the_halves_only_when_the_dev_rows_say_so() -> None:
    """The likelihood sweep: an answer under -L nats a token at the full context reads the
    random halves from ``c * (N + 1)`` calls on; chosen as the words sweep is."""
    given, own = short_case(40, 10, "u1", 3), short_case(40, 10, "u2", 3)
    given.record["full_logprob"], own.record["full_logprob"] = -2.0, -0.2
    assert lds_design._unlikely_key(given, 64, 1.5, 1.0) == (lds_design.AUTO_HALVES, "64")
    assert lds_design._unlikely_key(given, 32, 1.5, 1.0) == (lds_design.LIKELY, "32")
    assert lds_design._unlikely_key(own, 64, 0.25, 0.25) == (lds_design.LIKELY, "64")
    small = short_case(10, 3, "u3", 3)
    small.record["full_logprob"] = -2.0
    assert lds_design._unlikely_key(small, 32, 1.5, 1.0) == (lds_design.LIKELY, "32")  # < 40
    assert lds_design._unlikely_key(small, 40, 1.5, 1.0) == (lds_design.AUTO_HALVES, "40")

    def part(halves: float) -> dict[str, tuple[list[Case], list[Cells]]]:
        return halves_part([given, own], halves)

    table, better = lds_design.unlikely_halves_sweep(part(0.9), part(0.9))
    assert better == (0.25, 1.0) and table.startswith("| L | 1.0 |")  # one call a unit
    _, worse = lds_design.unlikely_halves_sweep(part(0.1), part(0.1))
    assert worse == (math.inf, math.inf)
    assert lds_design.SHIPPED_UNLIKELY == (1.5, 0.5) and lds_design.SHIPPED_FLOOR == 64


def test_a_stem_names_its_short_answer_shape_and_a_dotted_model_name_stays_whole() -> None:
    assert bench_lds.stem_shape("hotpotqa_qwen2.5-0.5b") == ("hotpotqa_qwen2.5-0.5b", "model")
    assert bench_lds.stem_shape("hotpotqa_qwen2.5-0.5b.span") == ("hotpotqa_qwen2.5-0.5b", "span")
    assert bench_lds.stem_shape("hotpotqa_smollm2.sentence") == ("hotpotqa_smollm2", "sentence")


def test_the_floor_table_reads_each_floor_on_three_parts_and_says_why_it_stands() -> None:
    """The unlikely-answer switch's floor: each (floor, c) on the dev rows, the other half
    and the files outside the search; the dev rows choose as the other sweeps do (the best
    objective among the cuts that miss no dev cell the switch's absence meets)."""
    given = short_case(40, 10, "f1", 3)
    given.record["full_logprob"] = -2.0
    win, lose = halves_part([given], 0.9), halves_part([given], 0.1)
    table, best = lds_design.floor_table(win, win, lose)
    assert best == [(16, 0.25), (16, 0.25), (64, 0.25), (16, 0.25)]  # ties: the higher floor
    rows = table.splitlines()[2:]
    assert len(rows) == 9 and rows[0] == "| 16 | 0.25 | 0.800 | 0.800 | 0.200 | 0 / 0 / 6 | 0 |"
    assert rows[-1] == "| 64 | 1.0 | 0.600 | 0.600 | 0.400 | 0 / 0 / 2 | 0 |"  # halves at 64 only
    assert "choose (16, 0.25), **not** the shipped floor" in lds_design._floor_verdict(best)
    # below 64 calls the halves gain on Bernoulli ½ and miss keep 1-4, which auto meets
    trade = halves_part([given], 0.9)
    for b in ("16", "32"):
        trade["f"][1][0][(lds_design.AUTO_HALVES, b)] = {"lds_bernoulli": 1.0, "lds_keep": 0.3}
    table, best = lds_design.floor_table(trade, win, lose)
    assert best[0] == (16, 0.25) and best[3] == (64, 0.25)
    assert table.splitlines()[2].endswith("| 0.675 | 0.800 | 0.200 | 2 / 0 / 6 | 2 |")
    words = lds_design._floor_verdict(best)
    assert words.startswith(": the dev rows score highest at (16, 0.25), which misses a dev cell")
    assert "the dev rows choose (64, 0.25), the shipped floor;" in words
    assert words.endswith("the files outside the search at (64, 0.25)")
    same = lds_design._floor_verdict([(64, 0.5)] * 4)  # 40 calls act as 64 on these budgets
    assert "choose (64, 0.5), the shipped rule as these budgets read it;" in same


def test_the_floor_moves_only_where_the_dev_choice_wins_on_more_files_than_it_loses() -> None:
    """Below the shipped floor, the dev rows' (floor, c) per file: the mean change of each
    sample from its floor on (an example it does not switch: no change); it stays on a tie."""
    given = short_case(40, 10, "m1", 3)
    given.record["full_logprob"] = -2.0
    win, lose = halves_part([given], 0.9)["f"], halves_part([given], 0.1)["f"]
    table, words = lds_design.floor_moves({"a": win, "b": lose}, (16, 0.5))
    assert table.splitlines()[2:] == [
        "| a | +0.200 | +0.200 | +0.000 |",
        "| b | -0.200 | -0.200 | +0.000 |",
    ]
    assert words == (
        "From 16 to under 40 calls, the dev rows' (16, 0.5) raises the two target samples on 1 "
        "of 2 files (a) and lowers them on 1, and lowers remove 2-5 on 0: the floor stays."
    )
    assert lds_design.floor_moves({"a": win}, (16, 0.5))[1].endswith(
        "**the floor should move to it**."
    )
    assert lds_design.floor_moves({"a": win}, (64, 0.25)) == ("", "")


def test_the_signal_table_correlates_each_signal_with_the_halves_lead_within_a_file(
    monkeypatch: Any,
) -> None:
    """Lesson 10: per file and budget, the halves' lead over auto without the switch (mean
    of the two target samples) and each signal's median and rank correlation with it; a
    file of fewer than eight examples is left out."""
    found = [case(40, 10, f"s{i}") for i in range(8)]
    table: list[Cells] = []
    for i, _ in enumerate(found):
        cells: Cells = {}
        for b in ("32", "64"):
            cells[(lds_design.LIKELY, b)] = {"lds_bernoulli": 0.5, "lds_keep": 0.5}
            lead = 0.01 * i if b == "32" else -0.01 * i
            cells[(lds_design.AUTO_HALVES, b)] = {
                "lds_bernoulli": 0.5 + lead,
                "lds_keep": 0.5 + lead,
            }
        table.append(cells)
    signals = {
        c.id: {"full": -float(i), "gain": float(i), "drop": 1.0} for i, c in enumerate(found)
    }
    signals[found[0].id]["drop"] = 2.0
    monkeypatch.setattr(lds_design, "_signals", lambda c: signals[c.id])
    text, words = lds_design.signal_table({"f": (found, table)})
    rows = text.splitlines()[2:]
    assert rows[0] == "| f | 32 | 8 | +0.035 | -3.50 (-1.00) | 3.50 (+1.00) | 1.00 (-0.58) |"
    assert rows[1] == "| f | 64 | 8 | -0.035 | -3.50 (+1.00) | 3.50 (-1.00) | 1.00 (+0.58) |"
    assert words.endswith(
        "No signal keeps one sign across the files and budgets: a cut on any "
        "of them sorts files (models and answer shapes), not the examples "
        "within one."
    )
    assert "full from -1.00 to +1.00 (above zero in 1 of 2)" in words
    assert lds_design.signal_table({"f": (found[:7], table[:7])})[0].count("\n") == 1


def test_the_two_draws_table_pairs_each_moved_cell_and_counts_its_interval() -> None:
    """Lesson 11: auto with two Thompson draws a round against one, paired per example; a
    cell where nothing moves is left out; the sentence counts the intervals' sides."""
    table: list[Cells] = []
    for gap in (-0.10, -0.12, -0.11):
        table.append(
            {
                ("auto", "16"): {"lds_bernoulli": 0.6, "lds_keep": 0.4},
                (lds_design.TWO_DRAWS, "16"): {"lds_bernoulli": 0.6 + gap, "lds_keep": 0.4},
                ("auto", "32"): {"drop@3": 1.0},
                (lds_design.TWO_DRAWS, "32"): {"drop@3": 1.0 + gap + 0.2},
            }
        )
    found = [case(20, 1, f"t{i}") for i in range(3)]  # one document counts too
    text, words = lds_design.two_draws_table({"f": (found, table)})
    rows = text.splitlines()[2:]
    assert rows == [
        "| f | 16 | LDS, Bernoulli ½ | 3 | 0.600 | 0.490 | -0.110 ± 0.025 |",
        "| f | 32 | drop@3 | 3 | 1.000 | 1.090 | 0.090 ± 0.025 |",
    ]
    assert words == (
        "Of the 2 cells that move, the 95% interval of two draws minus one lies wholly below "
        "zero in 1, wholly above it in 1, and straddles it in 0; were two draws no different, "
        "about 0.1 of 2 intervals would miss zero by chance."
    )
    assert lds_design.two_draws_table({"f": (found, table[:0])})[0] == "No cell moves."


def test_two_draws_are_pooled_per_budget_on_each_half_over_several_documents() -> None:
    def part(gaps: list[float], n_docs: int = 10) -> dict[str, tuple[list[Case], list[Cells]]]:
        found = [case(40, n_docs, f"p{n_docs}{i}{g}") for i, g in enumerate(gaps)]
        table: list[Cells] = [
            {
                ("auto", "8"): {"lds_bernoulli": 0.5},
                (lds_design.TWO_DRAWS, "8"): {"lds_bernoulli": 0.5 + g},
            }
            for g in gaps
        ]
        return {"f": (found, table)}

    one_document = part([0.9], n_docs=1)["f"]
    check = part([-0.1, -0.2])
    check["g"] = one_document  # one document: left out
    words = lds_design.two_draws_pooled(part([-0.1]), check)
    assert "dev / other half: 8 calls -0.100 / -0.150 ± 0.635; 16 calls – / –;" in words
    assert words.endswith(f"from {TWO_DRAWS_FROM} calls on and one under it.")


def test_the_share_kept_table_averages_each_methods_subsets_over_several_documents() -> None:
    """One row per file and budget where auto and every peer have a share; one-document
    examples are left out."""
    found = [case(40, 10, "k1"), case(40, 10, "k2"), case(20, 1, "k3")]
    table: list[Cells] = []
    for share in (0.9, 0.7, 0.1):
        cells: Cells = {("auto", "32"): {"kept": share}}
        cells |= {(m, "32"): {"kept": 0.5} for m in ("camab", "contextcite", "kernelshap")}
        cells[("auto", "64")] = {"kept": share}  # no peer at 64: no row
        table.append(cells)
    text = lds_design.kept_table({"f": (found, table)})
    rows = [r for r in text.splitlines() if r.startswith("| f |")]
    assert rows == ["| f | 32 | 0.80 | 0.50 | 0.50 | 0.50 |"]


def test_the_size_table_reads_equal_scores_beside_auto_and_contextcite_at_64() -> None:
    """Per file: the equal-scores row's mean LDS beside auto@64 and ContextCite-style@64 on
    the examples with all three (several documents); lesson 7 names the files whose
    equal-scores keep 1-4 LDS reaches the cut, and only those."""
    found = [case(40, 10, "s1"), case(40, 10, "s2"), case(40, 10, "s3"), case(20, 1, "s4")]
    table: list[Cells] = []
    for size_keep, auto in ((0.3, 0.4), (0.1, 0.2), (0.9, math.nan), (0.9, 0.9)):
        cells: Cells = {("size", "0"): {"lds_bernoulli": 0.2, "lds_keep": size_keep}}
        cells[("auto", "64")] = {"lds_bernoulli": 0.7, "lds_keep": auto}
        cells[("contextcite", "64")] = {"lds_bernoulli": 0.6, "lds_keep": 0.5}
        table.append(cells)
    low = [{k: {**v, "lds_keep": 0.0} for k, v in c.items()} for c in table]
    text, sized = lds_design.size_table({"f": (found, table), "g": (found, low)})
    rows = [r for r in text.splitlines() if r.startswith(("| f |", "| g |"))]
    assert rows[0] == "| f | 3 | 0.200 | 0.700 | 0.600 | 2 | 0.200 | 0.300 | 0.500 |"
    assert sized == ["f"]


def test_the_held_out_check_counts_rows_per_budget(tmp_path: Any, monkeypatch: Any) -> None:
    """Rows stored before 32 calls joined the check count at 8 and 16 only."""
    path = tmp_path / "check.jsonl"
    old = {"auto@8": 0.5, "contextcite@8": 0.4, "auto@16": 0.6, "contextcite@16": 0.6}
    new = {**old, "auto@16": 0.8, "auto@32": 0.7, "contextcite@32": 0.9}
    newest = {**new, "auto@64": 0.8, "contextcite@64": 0.7}
    designs = {"auto@32": "adaptive", "auto@64": "random_halves"}
    lines = [{"lds": x} for x in (old, old, new)] + [{"lds": newest, "designs": designs}]
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    monkeypatch.setattr(lds_design, "HELD_OUT_CHECK", path)
    monkeypatch.setattr(lds_design, "SHIPPED_FROM", 2)  # the last two rows: auto as it ships
    monkeypatch.setattr(lds_design, "CV_FROM", 3)  # the last row read its halves as auto does
    rows = [r.split(" | ")[:2] for r in lds_design.heldout_table().splitlines()[2:]]
    assert rows == [["| 8", "4"], ["| 16", "4"], ["| 32", "2"], ["| 64", "1"]]
    last = lds_design.heldout_table().splitlines()
    assert "-0.200" in last[-2] and "0 of 1 |" in last[-2]  # one row records its design
    assert last[-1] == "| 64 | 1 | 0.800 | 0.700 | 0.100 | 1: 0.100 | 1 of 1 |"
    # 16 calls: a gap of 0 on the two older rows, 0.2 on the two rows of auto as it ships
    assert "| 2: 0.200 ± 0.000 |" in last[3] and "| 0.100 ± " in last[3]


def test_the_check_keeps_a_row_only_where_the_switch_it_ran_reads_as_it_ships(
    tmp_path: Any, monkeypatch: Any
) -> None:
    """The rows were priced with the switch from 64 calls and N + 1; it ships from 40 and
    (N + 1) / 2, so at 64 calls a row over 64-127 sentences may have run another design and
    leaves the 'as it ships' column; under 40 calls and at 64 over fewer it stays. Were the
    switch to ship as the rows ran, every row would stay."""
    assert lds_titles.SHIPPED == (40, 0.5)
    assert lds_design._ships_alike(40, 64) and lds_design._ships_alike(67, 32)
    assert not lds_design._ships_alike(67, 64) and not lds_design._ships_alike(127, 64)
    assert lds_design._ships_alike(128, 64)  # under (N + 1) / 2 calls: neither reads it
    path = tmp_path / "check.jsonl"
    gaps = {"auto@64": 0.5, "contextcite@64": 0.4}
    path.write_text("".join(json.dumps({"n": n, "lds": gaps}) + "\n" for n in (40, 67, 30)))
    monkeypatch.setattr(lds_design, "HELD_OUT_CHECK", path)
    monkeypatch.setattr(lds_design, "SHIPPED_FROM", 0)
    assert lds_design.heldout_table().splitlines()[-1].split(" | ")[5] == "2: 0.100 ± 0.000"
    monkeypatch.setattr(lds_design, "SHIPPED", BEFORE)
    assert all(lds_design._ships_alike(n, b) for n in (40, 67, 127) for b in (32, 40, 64))


def test_the_check_keeps_a_halves_row_only_once_they_were_read_as_auto_reads_them(
    monkeypatch: Any,
) -> None:
    """A row that took the random halves before :data:`CV_FROM` read them with a fixed
    penalty: it leaves the 'as it ships' column at that budget; adaptive rows and later
    halves rows stay."""
    rows: list[dict[str, Any]] = [
        {"n": 40, "lds": {"auto@64": 0.9, "contextcite@64": 0.4}, "designs": {"auto@64": d}}
        for d in ("random_halves", "adaptive", "random_halves")
    ]
    monkeypatch.setattr(lds_design, "SHIPPED_FROM", 0)
    monkeypatch.setattr(lds_design, "CV_FROM", 2)
    assert lds_design._shipped_gaps(rows, 64) == [0.5, 0.5]  # rows 2 and 3
    rows[0]["lds"]["auto@64"] = 0.0
    assert lds_design._shipped_gaps(rows, 64) == [0.5, 0.5]  # the stale row does not count
    monkeypatch.setattr(lds_design, "CV_FROM", 0)
    assert lds_design._shipped_gaps(rows, 64) == [-0.4, 0.5, 0.5]


def test_the_pooled_check_reads_shipped_rows_and_the_titles_text_rows(
    tmp_path: Any, monkeypatch: Any
) -> None:
    """The check's rows priced with auto as it ships and the titles rows' text placement
    (not the template) pool into one gap, read against the line."""
    check, titles = tmp_path / "check.jsonl", tmp_path / "titles.jsonl"
    old = {"lds": {"auto@32": 0.0, "contextcite@32": 0.9}}  # before SHIPPED_FROM: left out
    shipped = [{"lds": {"auto@32": 0.7, "contextcite@32": 0.5}} for _ in range(2)]
    check.write_text("".join(json.dumps(x) + "\n" for x in [old, *shipped]))
    text = {"auto": 0.5, "contextcite": 0.3}
    row = {"budget": 32, "text": text, "template": {"auto": 0.0, "contextcite": 0.9}}
    titles.write_text(json.dumps(row) + "\n" + json.dumps({**row, "budget": 64}) + "\n")
    monkeypatch.setattr(lds_design, "HELD_OUT_CHECK", check)
    monkeypatch.setattr(lds_design, "TITLES_CHECK", titles)
    monkeypatch.setattr(lds_design, "SHIPPED_FROM", 1)
    said = lds_design.pooled_check()
    assert "is +0.200 ± 0.000 over 3 rows " in said
    assert "meets the target" in said
    shipped[1]["lds"]["auto@32"] = 0.2  # gaps 0.2, -0.3, 0.2: across the line
    check.write_text("".join(json.dumps(x) + "\n" for x in [old, *shipped]))
    assert "is +0.033 ± " in lds_design.pooled_check()
    assert "neither show a miss" in lds_design.pooled_check()
    titles.write_text(json.dumps({**row, "text": {"auto": 0.2, "contextcite": 0.5}}) + "\n")
    shipped[0]["lds"]["auto@32"] = shipped[1]["lds"]["auto@32"] = 0.2  # gaps all -0.3
    check.write_text("".join(json.dumps(x) + "\n" for x in [old, *shipped]))
    assert "is -0.300 ± 0.000 over 3 rows" in lds_design.pooled_check()
    assert "misses the target" in lds_design.pooled_check()
    titles.write_text("")
    check.write_text("")
    assert lds_design.pooled_check() == ""


def test_the_pooled_checks_read_each_check_budget_the_titles_rows_price(
    tmp_path: Any, monkeypatch: Any
) -> None:
    """One pooled reading per budget of the check's the titles rows price (40, the
    library's default, is none of them), each saying whose fits its held-out subsets skip;
    with no titles row, 32 alone."""
    check, titles = tmp_path / "check.jsonl", tmp_path / "titles.jsonl"
    gaps = {"auto@16": 0.6, "contextcite@16": 0.5, "auto@32": 0.5, "contextcite@32": 0.5}
    check.write_text(json.dumps({"lds": gaps}) + "\n")
    row = {"text": {"auto": 0.5, "contextcite": 0.3}, "template": {"auto": 0, "contextcite": 0}}
    budgets = (16, 40, 32, 16)
    titles.write_text("".join(json.dumps({**row, "budget": b}) + "\n" for b in budgets))
    monkeypatch.setattr(lds_design, "HELD_OUT_CHECK", check)
    monkeypatch.setattr(lds_design, "TITLES_CHECK", titles)
    monkeypatch.setattr(lds_design, "SHIPPED_FROM", 0)
    at16, at32 = lds_design.pooled_checks().split("\n\n")
    assert "only the 16-call fits' subsets" in at16 and "at 16 calls is +0.167 ± " in at16
    assert "over 3 rows" in at16
    assert "only the 32-call fits' subsets" in at32 and "at 32 calls is +0.100 ± " in at32
    titles.write_text("")
    alone = lds_design.pooled_checks()
    assert "at 32 calls is +0.000 ± " in alone and "over 1 rows" in alone
    assert "16 calls" not in alone


def test_the_locality_table_reads_each_replay_beside_auto_and_counts_its_wins() -> None:
    """Lesson 8: per budget, auto, the empty-context and half-and-half replays and the
    best peer on the examples where every one has the sample (half and half from 16
    calls); the counts say in how many cells each replay is above auto, per sample and in
    all three at once."""
    found = [case(40, 10, "l1"), case(40, 10, "l2"), case(20, 1, "l3")]
    table: list[Cells] = []
    for shift in (0.0, 0.2, 5.0):  # the one-document example is left out
        cells: Cells = {}
        for b in ("8", "16"):
            values = {"auto": 0.5, "empty-anchor": 0.4, "halves-union": 0.6, "camab": 0.1}
            values |= {"contextcite": 0.3 + shift, "kernelshap": 0.2}
            cells |= {(k, b): dict.fromkeys(lds_design.SAMPLE_TITLES, v) for k, v in values.items()}
        table.append(cells)
    table[1][("halves-union", "16")]["lds_keep"] = math.nan  # that example leaves keep out
    text, counts = lds_design.locality_table({"f": (found, table)})
    rows = [r.split(" | ")[1:] for r in text.splitlines() if r.startswith("| f |")]
    assert rows[0][:6] == ["8", "2", "0.500", "0.400", "–", "0.400"]
    assert rows[1][:6] == ["16", "2", "0.500", "0.400", "0.600", "0.400"]
    assert rows[1][6:11] == ["1", "0.500", "0.400", "0.600", "0.300"]  # keep: one example
    assert counts["halves-union"]["lds_keep"] == [1, 1]
    assert counts["empty-anchor"]["lds_bernoulli"] == [0, 2]
    assert counts["halves-union"]["all"] == [1, 1] and counts["empty-anchor"]["all"] == [0, 2]


def test_the_locality_replays_use_only_priced_subsets(tmp_path: Any) -> None:
    """The empty context takes auto's last call (first among the rows, its last row
    dropped); half and half joins auto at half the budget and ContextCite-style's first
    half-budget rows, from 16 calls; lesson 9's bent replays train on exactly auto's
    subsets and, on a reward linear in the segments, still rank them as the weights do;
    nothing is priced by the replays."""
    from benchmarks.bench_lds import fits_of
    from benchmarks.data import PricedReward, RewardStore
    from benchmarks.tests.test_lds import sentences_case

    example = sentences_case(12, documents=2)
    store = RewardStore(tmp_path / "r.jsonl")
    weights = np.linspace(-1.0, 1.0, example.n)

    def price(mask: np.ndarray) -> tuple[float, list[float]]:
        return float(weights @ mask) / example.n, [0.0]

    priced = fits_of(example, PricedReward(store, "e", price), ablations=False)
    replay = PricedReward(store, "e")
    found = lds_design._locality_fits(example, replay)
    assert sorted(b for k, b in found if k == "empty-anchor") == ["16", "32", "64", "8"]
    assert sorted(b for k, b in found if k == "halves-union") == ["16", "32", "64"]
    anchor = found[("empty-anchor", "32")].trained
    assert not anchor[0].any() and len(anchor) == 32
    np.testing.assert_array_equal(anchor[1:], priced[("auto", "32")].trained[:31])
    union = found[("halves-union", "32")].trained
    np.testing.assert_array_equal(union[16:], priced[("contextcite", "16")].trained)
    assert len(union) == 32 and replay.replayed > 0
    assert np.corrcoef(found[("empty-anchor", "64")].scores, weights)[0, 1] > 0.9
    for key in (lds_design.CONCAVE, lds_design.CONVEX):
        assert sorted(b for k, b in found if k == key) == ["16", "32", "64", "8"]
        for b in ("8", "64"):
            np.testing.assert_array_equal(found[(key, b)].trained, priced[("auto", b)].trained)
        assert np.corrcoef(found[(key, "64")].scores, weights)[0, 1] > 0.9


def test_the_bent_scales_turn_a_saturating_or_take_off_reward_into_its_sum() -> None:
    """Lesson 9: a reward ``K - exp(-z)`` whose top sits the gap below ``K`` reads as
    ``z`` on the saturating scale; ``bottom - gap + exp(z)`` reads as ``z`` on the
    take-off scale; both scales keep the rewards' order."""
    gap = lds_design.REWARD_GAP
    z = np.array([0.1, 0.5, 1.0, math.log(1.0 / gap)])
    saturating = 3.0 - np.exp(-z)  # its top is 3 - gap
    np.testing.assert_allclose(lds_design.bent(saturating, concave=True), z, atol=1e-12)
    z = np.array([math.log(gap), 0.0, 0.7, 1.5])
    taking_off = -2.0 - gap + np.exp(z)
    np.testing.assert_allclose(lds_design.bent(taking_off, concave=False), z, atol=1e-12)
    rewards = np.array([-2.0, -0.5, -1.0, -3.0])
    for concave in (True, False):
        order = np.argsort(lds_design.bent(rewards, concave))
        np.testing.assert_array_equal(order, np.argsort(rewards))


def test_the_locality_table_takes_the_replays_it_is_given() -> None:
    """Lesson 9's table: auto, the two bent replays and the best peer, and their counts."""
    found = [case(40, 10, "b1"), case(40, 10, "b2")]
    table: list[Cells] = []
    for _ in found:
        values = {"auto": 0.5, "reward-concave": 0.45, "reward-convex": 0.55}
        values |= {"camab": 0.1, "contextcite": 0.6, "kernelshap": 0.2}
        table.append(
            {(k, "64"): dict.fromkeys(lds_design.SAMPLE_TITLES, v) for k, v in values.items()}
        )
    replays = (lds_design.CONCAVE, lds_design.CONVEX)
    text, counts = lds_design.locality_table({"f": (found, table)}, replays)
    assert "saturating reward" in text.splitlines()[0] and "half and half" not in text
    row = next(r.split(" | ")[1:] for r in text.splitlines() if r.startswith("| f |"))
    assert row[:6] == ["64", "2", "0.500", "0.450", "0.550", "0.600"]
    assert counts["reward-convex"]["all"] == [1, 1]
    assert counts["reward-concave"]["lds_keep"] == [0, 1]


def test_every_method_is_read_against_the_best_of_the_others() -> None:
    """Each method misses a cell where another's mean is more than 0.02 above its own;
    counted per sample for 8-16 and for 32-64 calls; the sentence sums the target
    samples (Bernoulli ½, keep 1-4) and orders the methods by misses."""
    table: list[Cells] = []
    for _ in range(2):
        cells: Cells = {}
        for b, values in (("8", (0.5, 0.1, 0.45, 0.2)), ("64", (0.5, 0.1, 0.6, 0.2))):
            for k, v in zip(("auto", "camab", "contextcite", "kernelshap"), values):
                cells[(k, b)] = dict.fromkeys(lds_design.SAMPLE_TITLES, v)
        table.append(cells)
    for cells in table:  # no removal cell at 64
        cells[("auto", "64")]["lds_removal"] = math.nan
    text, words = lds_design.every_method_table({"f": ([], table)})
    rows = {r.split(" | ")[0][2:]: r.split(" | ")[1:] for r in text.splitlines()[2:]}
    auto = rows["auto (ours, default)"]
    assert auto[0] == "0 of 1 / 1 of 1" and auto[1] == "0 of 1 / 1 of 1"  # Bernoulli, keep
    assert auto[2].rstrip(" |") == "0 of 1 / 0 of 0"  # remove 2-5: no 64-call cell
    assert rows["ContextCite-style"][0] == "1 of 1 / 0 of 1"  # auto is among the others
    assert words == (
        "Target cells (Bernoulli ½ and keep 1-4) missed, of 4: auto (ours, default) 2, "
        "ContextCite-style 2, CAMAB (Algorithm 1) 4, KernelSHAP 4."
    )


def test_the_moves_table_shows_only_the_cells_a_switch_moves() -> None:
    """``auto`` against a variant on the examples over several documents with both priced:
    a cell where nothing moves is left out; drop@3 and gold AUROC are read like the LDS."""
    found = [case(40, 10, "m1"), case(40, 10, "m2"), case(20, 1, "m3")]
    table: list[Cells] = []
    for moved in (0.2, 0.4, 9.0):  # the one-document example is left out
        cells: Cells = {
            (lds_design.LIKELY, "64"): {"lds_keep": 0.3, "drop@3": 1.0, "auroc": 0.6},
            ("auto", "64"): {"lds_keep": 0.3 + moved, "drop@3": 1.0, "auroc": 0.6 + moved},
            (lds_design.LIKELY, "32"): {"lds_keep": 0.3},
        }
        table.append(cells)
    text = lds_design.moves_table(
        {"f": (found, table)}, lds_design.LIKELY, "without", lds_design.MOVED_TITLES
    )
    rows = [r for r in text.splitlines() if r.startswith("| f |")]
    assert rows == [
        "| f | 64 | LDS, keep 1-4 | 2 | 0.300 | 0.600 | +0.300 |",
        "| f | 64 | gold AUROC | 2 | 0.600 | 0.900 | +0.300 |",
    ]
    assert "| without | auto | change |" in text.splitlines()[0]


def test_the_span_tokens_of_a_sentence_answer_include_the_one_that_opens_with_a_space() -> None:
    response = "The answer is Robert Childers DSC."
    # a byte-level BPE's offsets: a word's token takes the space before it
    words = ["The", " answer", " is", " Robert", " Child", "ers", " D", "SC", "."]
    ends = np.cumsum([len(w) for w in words])
    offsets = list(zip([0, *ends[:-1]], ends))
    assert "".join(words) == response
    span = lds_design.span_tokens(response, offsets)
    assert span.tolist() == [False, False, False, True, True, True, True, True, False]
    # a tokenizer that trims the space gives the same split
    trimmed = [
        (a + 1, b) if words[i].startswith(" ") else (a, b) for i, (a, b) in enumerate(offsets)
    ]
    assert lds_design.span_tokens(response, trimmed).tolist() == span.tolist()


def test_the_split_table_groups_the_examples_by_what_the_switch_does_with_them() -> None:
    """At the shipped floor, over several documents: examples the switch fires on, unlikely
    ones over too many units for it, likely ones; ``auto`` beside ContextCite-style and the
    paired gap on the two target samples, and each group's count of cells within 0.02."""
    fired, wide, likely = case(40, 10, "s1"), case(130, 10, "s2"), case(40, 10, "s3")
    one = case(20, 1, "s4")  # one document: left out
    for found, full in ((fired, -2.0), (wide, -2.0), (likely, -0.5), (one, -2.0)):
        found.record["full_logprob"] = full
    table: list[Cells] = []
    for gap in (0.0, -0.3, -0.1, -0.9):
        table.append(
            {
                ("auto", "64"): {"lds_bernoulli": 0.6 + gap, "lds_keep": 0.3},
                ("contextcite", "64"): {"lds_bernoulli": 0.6, "lds_keep": 0.3},
            }
        )
    rows, words = lds_design.split_table({"f": ([fired, wide, likely, one], table)})
    assert rows.splitlines()[2:] == [
        "| f | the switch fires | 1 | 0.600 | 0.600 | 0.000 | 1 | 0.300 | 0.300 | 0.000 |",
        "| f | unlikely, N + 1 past its cut | 1 | 0.300 | 0.600 | -0.300 | 1 | 0.300 | 0.300 "
        "| 0.000 |",
        f"| f | likely: {lds_design.LIKELY_DESIGN} | 1 | 0.500 | 0.600 | -0.100 | 1 | 0.300 "
        "| 0.300 | 0.000 |",
    ]
    assert words == (
        "Cells (file and sample) whose mean gap at 64 calls is within 0.02 of "
        "ContextCite-style or above, per group: the switch fires: 2 of 2; unlikely, N + 1 "
        f"past its cut: 1 of 2; likely: {lds_design.LIKELY_DESIGN}: 1 of 2. Where the switch "
        "fires, `auto` reads ContextCite's own subsets and keeps up; what it trails by at this "
        "budget sits in the answers it leaves on its adaptive design."
    )
    table[0][("auto", "64")]["lds_bernoulli"] = 0.5  # it trails where the switch fires too
    assert lds_design.split_table({"f": ([fired, wide, likely, one], table)})[1].endswith(
        f"likely: {lds_design.LIKELY_DESIGN}: 1 of 2."
    )
    # at 64 calls a likely answer takes the halves too (HALVES_FOR_EVERY_ANSWER_FROM)
    assert lds_design.LIKELY_DESIGN.startswith("the halves for every answer from 64 calls")
