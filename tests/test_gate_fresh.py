"""The blind hand-written gate set (``gate_fresh_cases.json``) as the benchmark reads
it: two answers per case, a split fixed by the question's hash, a follow-up's earlier
turns scored as context the way ``assess_answer(history=)`` scores them."""

from __future__ import annotations

import hashlib
import json
from collections import Counter

import pytest
from fakes import KeywordScorer

from camab_rag.attributor import assess_answer

gate_sets = pytest.importorskip("benchmarks.gate_sets")
bench_gate = pytest.importorskip("benchmarks.bench_gate")


def test_every_case_gives_a_right_and_an_invented_answer_split_by_question_hash() -> None:
    items = gate_sets.load_items("fresh")
    assert len(items) == 120 and "fresh" in gate_sets.SETS
    assert Counter(i.unsupported for i in items) == {False: 60, True: 60}
    assert Counter(i.group for i in items) == dict.fromkeys(
        ("short", "paraphrase", "followup", "mixed"), 30
    )
    for item in items:
        parity = hashlib.sha256(item.question.encode("utf-8")).digest()[-1] % 2
        assert item.split == ("dev" if parity == 0 else "held_out")
        assert bool(item.history) == (item.group == "followup")
    splits = Counter((i.group, i.split) for i in items)
    assert all(splits[(kind, s)] > 0 for kind, _ in splits for s in ("dev", "held_out"))


def test_a_follow_up_is_stored_with_its_earlier_turns_as_context() -> None:
    """bench_gate's rows of a follow-up hold the same token support as
    ``assess_answer(..., history=)``: the earlier turns are context, not left out."""
    item = next(i for i in gate_sets.load_items("fresh") if i.history)
    row = bench_gate.score_group(KeywordScorer(), [item])[0]
    report = assess_answer(
        item.question, [item.context], item.answer, KeywordScorer(), history=item.history
    )
    assert report.token_support is not None
    assert row["support"]["earlier_turns"] == report.token_support.earlier_turns > 0
    assert row["support"]["conversation"] == list(report.token_support.conversation)


def test_the_section_counts_per_kind_on_one_half_beside_coverage_alone() -> None:
    report = pytest.importorskip("benchmarks.gate_fresh_report")
    rows = [
        {
            "kind": "short",
            "split": "held_out",
            "unsupported": False,
            "blocked": False,
            "blocked_any": True,
            "coverage": 1.0,
        },
        {
            "kind": "short",
            "split": "held_out",
            "unsupported": True,
            "blocked": True,
            "blocked_any": True,
            "coverage": 1.0,
        },
        {
            "kind": "mixed",
            "split": "held_out",
            "unsupported": False,
            "blocked": True,
            "blocked_any": True,
            "coverage": 0.5,
        },
        {
            "kind": "mixed",
            "split": "dev",
            "unsupported": True,
            "blocked": False,
            "blocked_any": False,
            "coverage": 0.5,
        },
    ]
    figures = report.kind_figures(rows, "held_out", 0.8)
    assert figures["short"] == {
        "right passed": "1.00 (1/1)",
        "invented blocked": "1.00 (1/1)",
        'right passed: `block_on="any"`': "0.00 (0/1)",  # the stricter rule, beside
        'invented blocked: `block_on="any"`': "1.00 (1/1)",
        "coverage-only right passed": "1.00 (1/1)",
        "coverage-only invented blocked": "0.00 (0/1)",
    }
    assert figures["mixed"]["right passed"] == "0.00 (0/1)"
    assert figures["mixed"]["invented blocked"] == "– (0/0)"  # the dev row is not counted
    assert figures["all"]["right passed"] == "0.50 (1/2)"
    docs = ["Cards cost 3 euros.", "Update: a new card costs 5 euros.", "Open on Sundays."]
    assert report.lexical_sources("A new card costs 5 euros.", docs) == {1}


def test_the_multi_document_note_counts_the_gates_misses_apart() -> None:
    """FRESH_MULTI: the misses of cite() that the citation rule alone does not make are
    the gate's (a rejected sentence cites nothing); a first measurement without the
    rule's own row still renders."""
    report = pytest.importorskip("benchmarks.gate_fresh_report")
    figures = {
        "cite(): source cited": "0.30 (3/10)",
        "cite(), gate verdicts set aside: source cited": "1.00 (10/10)",
    }
    assert "in the other 7 the gate judged" in report._multi_note(figures)
    first = {"cite(): source cited": "0.10 (1/10)", "cite(): stale shown as support": "0"}
    first |= {
        "lexical (0 calls): source cited": "1",
        "lexical (0 calls): stale shown as support": "0",
    }
    table = report._multi_table({split: first for split in ("held_out", "dev", "all")})
    assert "set aside" not in table and table.count("| lexical (0 calls) |") == 3


def test_the_cases_read_from_json_equal_the_python_literals_they_replaced() -> None:
    """The blind set moved from Python literals to ``gate_fresh_cases.json``: the loaded
    cases hash to the old literals' canonical JSON (taken before the move)."""
    cases = gate_sets.hand_written("gate_fresh")
    FRESH, FRESH_MULTI = cases["FRESH"], cases["FRESH_MULTI"]
    canonical = json.dumps({"FRESH": FRESH, "FRESH_MULTI": FRESH_MULTI}, sort_keys=True)
    digest = hashlib.sha256(canonical.encode("utf-8")).hexdigest()
    assert (len(FRESH), len(FRESH_MULTI)) == (60, 10)
    assert digest == "cd0fdbdee87a9bd04d95d9dcc344581304b1a1647a29661aae2195a870ba4268"


def test_the_written_cases_read_from_json_equal_the_python_literals_they_replaced() -> None:
    """The hand-written short set moved to ``gate_written_cases.json``: the loaded cases
    hash to the old literals' canonical JSON (taken before the move)."""
    cases = gate_sets.hand_written("gate_written")
    BENCHMARK, CALIBRATION = cases["BENCHMARK"], cases["CALIBRATION"]

    canonical = json.dumps({"BENCHMARK": BENCHMARK, "CALIBRATION": CALIBRATION}, sort_keys=True)
    digest = hashlib.sha256(canonical.encode("utf-8")).hexdigest()
    assert (len(BENCHMARK), len(CALIBRATION)) == (24, 8)
    assert all(len(case) == 4 for case in BENCHMARK + CALIBRATION)
    assert digest == "83550d2d2c9ff49e52757818ff1c5fe227481645a59f6a6548f24a5c27eac70f"
