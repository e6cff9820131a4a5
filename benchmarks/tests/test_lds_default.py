"""The default budget's table and its candidate's tests (pure logic, no model)."""

from __future__ import annotations

from benchmarks import lds_default
from benchmarks.bench_lds import ANYTIME, SIZE_ONLY, Cells
from benchmarks.lds_default import (
    SWITCHED,
    UNSWITCHED,
    candidate_tests,
    default_headlines,
    default_rows,
    free_ahead,
)
from camab_rag import AttributionSettings
from camab_rag.methods.auto import UNLIKELY_HALVES_FROM, UNLIKELY_HALVES_MIN_CALLS


def cells(before: float, switched: float, peer: float) -> Cells:
    """One example at 40 calls: both switches and every peer, the same on both samples."""
    label = str(lds_default.DEFAULT_BUDGET)
    values = {
        UNSWITCHED: before,
        SWITCHED: switched,
        "auto": before,
        **{m: peer - 0.1 for m in ANYTIME},
        "contextcite": peer,
    }
    out: Cells = {(k, label): {"lds_bernoulli": v, "lds_keep": v} for k, v in values.items()}
    out[("lexical", "0")] = {"lds_bernoulli": 0.2, "lds_keep": 0.1}
    return out


def test_the_default_budget_is_the_librarys() -> None:
    assert lds_default.DEFAULT_BUDGET == AttributionSettings().budget == 40
    assert lds_default.CANDIDATE == (40, 0.5)


def test_the_candidate_passes_where_it_gains_and_loses_no_met_cell() -> None:
    tables = {
        "gold": [cells(0.50, 0.60, 0.60), cells(0.52, 0.62, 0.62)],
        "model": [cells(0.70, 0.70, 0.65), cells(0.72, 0.72, 0.67)],
    }
    raised, kept, words = candidate_tests(tables)
    assert raised and kept
    assert "the switch from 64 calls 0.610, from 40 calls 0.660: passed" in words
    assert "misses: none: passed" in words


def test_the_candidate_fails_where_it_loses_a_met_cell_even_if_the_mean_gains() -> None:
    tables = {
        "gold": [cells(0.40, 0.70, 0.70), cells(0.40, 0.70, 0.70)],
        "qwen": [cells(0.70, 0.66, 0.70), cells(0.70, 0.66, 0.70)],
    }
    raised, kept, words = candidate_tests(tables)
    assert raised and not kept
    assert "misses: qwen LDS, Bernoulli ½, qwen LDS, keep 1-4: failed" in words


def test_the_candidate_fails_where_the_mean_falls() -> None:
    tables = {"gold": [cells(0.60, 0.59, 0.60), cells(0.60, 0.59, 0.60)]}
    raised, kept, _ = candidate_tests(tables)
    assert not raised and kept  # -0.01: still within the line, but lower


def test_a_row_reads_both_switches_against_the_best_peer() -> None:
    partial: Cells = {("auto", "40"): {}}
    table = [cells(0.50, 0.61, 0.62), cells(0.54, 0.65, 0.66), partial]
    [bernoulli, keep] = [[str(c) for c in row] for row in default_rows("gold", table)]
    assert bernoulli[:3] == ["gold", "2", "LDS, Bernoulli ½"]  # the partial example left out
    assert bernoulli[-3] == "ContextCite-style"
    assert bernoulli[-2].startswith("-0.120 ± 0.000 (below)")
    assert bernoulli[-1].startswith("-0.010 ± 0.000 (above)")
    assert keep[2] == "LDS, keep 1-4"


def test_a_peer_some_example_lacks_is_left_out_not_the_example() -> None:
    short = cells(0.50, 0.61, 0.62)
    del short[("camab", "40")]
    table = [cells(0.50, 0.61, 0.62), short]
    [bernoulli, _] = [[str(c) for c in row] for row in default_rows("gold", table)]
    assert bernoulli[1] == "2"
    assert bernoulli[5:8] == ["–", "0.620", "0.520"]  # CAMAB, ContextCite-style, KernelSHAP
    raised, kept, _ = candidate_tests({"gold": table})
    assert raised and kept


def test_the_headline_rows_read_auto_as_it_ships_against_the_best_peer() -> None:
    gold = [cells(0.50, 0.61, 0.62), cells(0.54, 0.65, 0.66)]
    model = [cells(0.70, 0.70, 0.71), cells(0.72, 0.72, 0.73)]
    for table in (gold, model):
        for t in table:
            t[SIZE_ONLY] = {"lds_bernoulli": 0.3}
    tables = {"hotpotqa_smollm2.sentence": gold, "hotpotqa_smollm2": model, "other": model}
    rows = default_headlines(tables)
    assert [r[0] for r in rows] == [
        "LDS, Bernoulli ½ at 40 calls (the default budget), hotpotqa_smollm2, 'The answer is "
        "X.' (one sentence carrying the gold span) as the answer",
        "LDS, Bernoulli ½ at 40 calls (the default budget), hotpotqa_smollm2",
    ]
    assert rows[0][1:] == [
        "0.520 ± 0.254",
        "lexical TF-IDF 0.200 ± 0.000; equal scores (size only) 0.300 ± 0.000",
        "within 0.02 of ContextCite-style (0.640) missed",
    ]
    assert rows[1][3] == "within 0.02 of ContextCite-style (0.720) met"


def test_the_rows_where_the_free_ranking_leads_are_named() -> None:
    table = [cells(0.50, 0.61, 0.62), cells(0.54, 0.65, 0.66)]
    assert free_ahead({"gold": table}) == (
        "The lexical ranking (no call) is ahead of `auto` on no row."
    )
    low = [cells(0.10, 0.61, 0.62), cells(0.14, 0.65, 0.66)]  # lexical 0.2 and 0.1 here
    words = free_ahead({"gold": low})
    assert "ahead of `auto` on: gold LDS, Bernoulli ½. Gold AUROC asks" in words


def test_a_candidate_that_passes_but_is_not_shipped_says_why() -> None:
    """A passing candidate the library does not ship says what it waits on; a failing one
    says nothing of it; a shipped one says what it waited on besides its tests."""
    shipped = f"`auto` ships it from {UNLIKELY_HALVES_MIN_CALLS} calls and {UNLIKELY_HALVES_FROM}"
    waits = lds_default._verdict(True, False)
    assert waits.startswith(shipped + " calls a unit for now: ")
    assert waits.endswith(lds_default.NOT_YET) and "re-priced" in lds_default.NOT_YET
    assert lds_default._verdict(False, False) == shipped + " calls a unit"
    done = lds_default._verdict(True, True)
    assert done == "`auto` ships the switch from 40 calls: " + lds_default.CITED
    assert "re-priced" in done and "held-out targets" in done
