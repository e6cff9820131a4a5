"""The gate's target rows and the conflicts benchmark's shares, from figures given here
(pure logic: no stored rows, no model)."""

from __future__ import annotations

import math
from typing import Any

import benchmarks.bench_conflicts as conflicts
from benchmarks.gate_verdict import TARGETS, free_figure, verdict_targets


def _headline(value: float) -> dict[str, Any]:
    figures = {key: value for _, _, key, _ in TARGETS}
    figures |= {"halueval_blocked": 0.5, "frank_blocked": 0.25}
    return {
        **figures,
        "any": {"halueval_blocked": 0.81, "frank_blocked": 0.5},
        "free": dict.fromkeys(figures, 0.4),
        "qwen_shipped_ba": 0.70,
        "qwen_own_ba": 0.75,
    }


def test_each_target_is_met_at_its_bound_and_blocked_shares_sit_beside_flagged_ones() -> None:
    at_bounds = _headline(0.0) | {key: least for _, _, key, least in TARGETS}
    rows = verdict_targets(at_bounds)
    assert [row[3] for row in rows[:-1]] == ["met"] * len(TARGETS)
    beside = {row[0]: row[4] for row in rows}
    assert beside["HaluEval hallucinated flagged"] == "0.50 / 0.81"
    assert beside["FRANK CNN/DM unfaithful flagged"] == "0.25 / 0.50"
    assert beside["HaluEval right answers passed"] == ""
    # Qwen: calibrate(scorer) 0.05 below its own labels misses the -0.03 bound
    assert rows[-1][2:4] == ["-0.050", "missed"]
    assert [row[3] for row in verdict_targets(_headline(math.nan))[:-1]] == ["missed"] * 5
    assert free_figure(at_bounds, TARGETS[0][0]) == "coverage alone (0 calls) 0.40"
    assert free_figure(at_bounds, rows[-1][0]) == "not run"


def _case(order: list[str]) -> Any:
    return [(role, {"title": role, "text": role}) for role in order], {}


def test_conflict_shares_count_copies_sources_and_control_flags() -> None:
    """Two conflict cases (the copy flagged in one, cited in the other) and one control
    case of four documents with one false flag."""
    cases = [_case(["source", "copy", "gold", "other"]), _case(["copy", "source", "gold", "other"])]
    control = [_case(["source", "gold", "other", "other"])]
    decisions = iter([({1}, {0}), (set(), {0, 1}), ({3}, {0})])
    figures = conflicts.rates(cases, control, lambda _case: next(decisions))
    assert figures == {
        "copy flagged": 0.5,
        "copy shown as support": 0.5,
        "true source flagged": 0.0,
        "true source cited": 1.0,
        "control documents flagged": 0.25,
    }
    assert math.isnan(
        conflicts.rates(cases, [], lambda _case: (set(), set()))["control documents flagged"]
    )
    assert conflicts._row("rule", figures)[1:] == ["0.500", "0.500", "0.000", "1.000", "0.250"]


def test_the_lds_report_names_the_rows_lds_answers_new_added(monkeypatch: Any) -> None:
    from benchmarks import bench_lds
    from benchmarks.bench_lds import Case, _new_rows_sentence
    from benchmarks.data import Example

    example = Example("x", "q?", [{"text": "A.", "title": "T"}], [[(0, 2)]], [0], ["A"])
    stored = {"id": "a", "model": "smollm2"}
    new = {"id": "b", "model": "smollm2", "answered": {"source": "hotpotqa rows 100+"}}
    again = {"id": "c", "model": "qwen", "answered": {"source": "hotpotqa_smollm2"}}
    mixed = [Case("hotpotqa_smollm2", r, example) for r in (stored, new, new)]
    text = _new_rows_sentence(mixed, "hotpotqa_smollm2", "sentence")
    assert text.startswith("2 of the 3 examples are newer dataset rows (hotpotqa rows 100+)")
    assert "that no other file and no held-out check uses" in text
    # added rows a held-out check took too are said so; neither a stored row ("a") nor one
    # answered from another file ("c") is counted
    monkeypatch.setattr(bench_lds, "checked_ids", lambda: {"a", "b", "c"})
    with_again = [*mixed, Case("hotpotqa_smollm2", again, example)]
    shared = _new_rows_sentence(with_again, "hotpotqa_smollm2", "sentence")
    assert "that no other file uses (2 of them also rows of a held-out check" in shared
    assert "no held-out check uses" not in shared
    monkeypatch.undo()
    assert "--shape sentence --also model,span" in text and "the gold answer" in text
    assert "answered by the model itself" in _new_rows_sentence(mixed, "hotpotqa_smollm2", "model")
    # a stored run alone, or a file all answered from another (said in its own header): nothing
    assert _new_rows_sentence(mixed[:1], "hotpotqa_smollm2", "model") == ""
    assert _new_rows_sentence([Case("h", again, example)] * 2, "h", "model") == ""
