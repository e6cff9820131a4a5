"""The second blind gate set (issue 48): its two files hold what the report assumes, split
as the rule says, and its figures count passed / blocked / flagged answers per kind."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from pathlib import Path

from benchmarks.gate_fresh_report import blind_headline_rows, kind_figures
from benchmarks.gate_sets import load_items

RESULTS = Path(__file__).resolve().parents[1] / "results"
FIELDS = {"kind", "domain", "context", "question", "right", "invented", "history"}


def halves() -> dict[str, list[dict[str, object]]]:
    return {
        split: json.loads((RESULTS / f"gate_fresh2_{split}.json").read_text("utf-8"))["FRESH2"]
        for split in ("dev", "held_out")
    }


def test_the_two_files_hold_sixty_cases_split_by_the_first_hash_byte() -> None:
    loaded = halves()
    cases = [c for rows in loaded.values() for c in rows]
    assert len(cases) == 60
    assert Counter(c["kind"] for c in cases) == {
        "short": 15,
        "paraphrase": 15,
        "followup": 15,
        "mixed": 15,
    }
    for split, rows in loaded.items():
        for case in rows:
            assert set(case) == FIELDS
            assert case["right"] and case["invented"] and case["right"] != case["invented"]
            assert bool(case["history"]) == (case["kind"] == "followup")
            first = hashlib.sha256(str(case["question"]).encode("utf-8")).digest()[0]
            assert split == ("dev" if first % 2 == 0 else "held_out")
    questions = [{c["question"] for c in rows} for rows in loaded.values()]
    assert not questions[0] & questions[1]
    assert sum(map(len, questions)) == 60


def test_the_set_loads_as_two_answers_per_case_with_its_split() -> None:
    items = load_items("fresh2")
    assert len(items) == 120 and len({i.id for i in items}) == 120
    assert sum(i.unsupported for i in items) == 60
    held = {c["question"] for c in halves()["held_out"]}
    assert all((i.split == "held_out") == (i.question in held) for i in items)
    follow = [i for i in items if i.group == "followup"]
    assert follow and all(m["role"] in ("user", "assistant") for i in follow for m in i.history)


def test_figures_count_right_passed_and_invented_blocked_and_flagged() -> None:
    def row(kind: str, unsupported: bool, verdict: str, coverage: float) -> dict[str, object]:
        return {
            "kind": kind,
            "split": "held_out",
            "unsupported": unsupported,
            "blocked": verdict == "unsupported",
            "flagged": verdict != "supported",
            "coverage": coverage,
        }

    rows = [
        row("short", False, "supported", 1.0),
        row("short", False, "uncertain", 0.5),
        row("short", True, "uncertain", 0.9),
        row("mixed", True, "unsupported", 0.4),
        {**row("mixed", False, "unsupported", 1.0), "split": "dev"},
    ]
    got = kind_figures(rows, "held_out", 0.6, "fresh2")
    assert got["short"] == {
        "right passed": "1.00 (2/2)",
        "invented blocked": "0.00 (0/1)",
        "invented flagged": "1.00 (1/1)",
        "coverage-only right passed": "0.50 (1/2)",
        "coverage-only invented blocked": "0.00 (0/1)",
    }
    assert got["all"]["invented blocked"] == "0.50 (1/2)"
    assert got["paraphrase"]["right passed"] == "– (0/0)"
    (headline,) = blind_headline_rows({"fresh2": {"answers": 5, "held_out": got}})
    assert headline[1:] == ["1.00 (2/2)", "coverage alone (0 calls) 0.50 (1/2)", "≥ 0.95 met"]


def test_the_headline_reads_the_counts_not_the_rounded_share_and_pools_the_sets() -> None:
    """37/39 prints as 0.95 but is under 0.95: the row says missed, with three decimals."""
    held = {
        "all": {
            "right passed": "0.95 (37/39)",
            "coverage-only right passed": "0.56 (22/39)",
        }
    }
    other = {"all": {"right passed": "1.00 (40/40)", "coverage-only right passed": "0.50 (20/40)"}}
    rows = blind_headline_rows(
        {"fresh2": {"answers": 78, "held_out": held}, "fresh3": {"answers": 80, "held_out": other}}
    )
    assert rows[0][3] == "≥ 0.95 missed (0.949)"
    assert rows[1][3] == "≥ 0.95 met"
    assert rows[2][1:] == ["0.97 (77/79)", "coverage alone (0 calls) 0.53 (42/79)", "≥ 0.95 met"]
