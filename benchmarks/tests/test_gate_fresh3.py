"""The third blind gate set (issue 48) is wired in like the second: two answers per case,
the split taken from the file, the second set's columns."""

from __future__ import annotations

import json
from collections import Counter

from benchmarks.gate_fresh_report import (
    BLIND_SETS,
    COLUMNS,
    HEADLINES,
    SECTIONS,
    first_path,
    fresh_section,
)
from benchmarks.gate_sets import SETS, load_items


def test_the_set_loads_as_two_answers_per_case_split_by_file() -> None:
    items = load_items("fresh3")
    assert len(items) == 160 and len({i.id for i in items}) == 160
    assert sum(i.unsupported for i in items) == 80
    assert Counter(i.split for i in items) == {"dev": 70, "held_out": 90}
    assert all(i.id.startswith(f"fresh3-{i.split}-") for i in items)
    assert Counter(i.group for i in items) == {
        "short": 40,
        "paraphrase": 40,
        "followup": 40,
        "mixed": 40,
    }


def test_the_report_counts_it_with_the_flagged_column() -> None:
    assert "fresh3" in SETS and "fresh3" in BLIND_SETS
    assert {name for name, _, _ in COLUMNS["fresh3"]} == {
        "right passed",
        "invented blocked",
        "invented flagged",
    }
    assert "fresh3" in HEADLINES and "fresh3" in SECTIONS


def test_its_section_shows_both_halves_of_the_first_measurement() -> None:
    first = json.loads(first_path("smollm2", "fresh3").read_text("utf-8"))
    assert first["answers"] == 160 and {"held_out", "dev"} <= set(first)
    now = {**first, "coverage_cut": None}
    lines = fresh_section({"fresh": {"answers": 0}, "fresh2": {"answers": 0}, "fresh3": now})
    assert lines[0].startswith("### A third blind set")
    assert "Dev half, first measurement:" in lines
