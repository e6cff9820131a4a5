"""The later blind gate sets (issue 48) are wired in like the second: two answers
per case, the split taken from the file, the second set's columns."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest

from benchmarks.gate_fresh_report import (
    BLIND_SETS,
    COLUMNS,
    HEADLINES,
    SECTIONS,
    _marked_lines,
    _right_shown,
    first_path,
    fresh_section,
)
from benchmarks.gate_sets import SETS, load_items

LATER = {
    "fresh3": ({"dev": 70, "held_out": 90}, "third"),
    "fresh4": ({"dev": 74, "held_out": 86}, "fourth"),
    "fresh5": ({"dev": 70, "held_out": 90}, "fifth"),
    "fresh6": ({"dev": 80, "held_out": 80}, "sixth"),
    "fresh7": ({"dev": 84, "held_out": 76}, "seventh"),
    "fresh8": ({"dev": 82, "held_out": 78}, "eighth"),
    "fresh9": ({"dev": 82, "held_out": 78}, "ninth"),
    "fresh10": ({"dev": 68, "held_out": 92}, "tenth"),
    "fresh11": ({"dev": 72, "held_out": 88}, "eleventh"),
    "fresh12": ({"dev": 92, "held_out": 68}, "twelfth"),
    "fresh13": ({"dev": 94, "held_out": 66}, "thirteenth"),
}


@pytest.mark.parametrize("name", sorted(LATER))
def test_the_set_loads_as_two_answers_per_case_split_by_file(name: str) -> None:
    items = load_items(name)
    assert len(items) == 160 and len({i.id for i in items}) == 160
    assert sum(i.unsupported for i in items) == 80
    assert Counter(i.split for i in items) == LATER[name][0]
    assert all(i.id.startswith(f"{name}-{i.split}-") for i in items)
    assert Counter(i.group for i in items) == {
        "short": 40,
        "paraphrase": 40,
        "followup": 40,
        "mixed": 40,
    }


@pytest.mark.parametrize("name", sorted(LATER))
def test_the_report_counts_it_with_the_flagged_column(name: str) -> None:
    assert name in SETS and name in BLIND_SETS
    assert {column for column, _, _ in COLUMNS[name]} == {
        "right passed",
        "invented blocked",
        "invented flagged",
    }
    assert name in HEADLINES and name in SECTIONS


@pytest.mark.parametrize("name", sorted(LATER))
def test_its_section_shows_both_halves_of_the_first_measurement(name: str) -> None:
    first = json.loads(first_path("smollm2", name).read_text("utf-8"))
    assert first["answers"] == 160 and {"held_out", "dev"} <= set(first)
    now = {**first, "coverage_cut": None}
    blind = {other: {"answers": 0} for other in BLIND_SETS} | {name: now}
    lines = fresh_section(blind)
    assert lines[0].startswith((f"### A {LATER[name][1]} ", f"### An {LATER[name][1]} "))
    assert "Dev half, first measurement:" in lines
    table = "\n".join(lines[lines.index("### First measurements of the later blind sets") :])
    assert [line for line in table.splitlines() if line.startswith("| ")][1:] == [
        f"| {LATER[name][1]} set | "
        + " | ".join(
            first["held_out"]["all"][c]
            for c in ("right passed", "invented blocked", "invented flagged")
        )
        + " |"
    ]


def test_the_right_answers_marked_in_flag_mode_are_counted_per_set_and_kind() -> None:
    rows = [  # held-out right answers: two unmarked, one marked, one blocked; one invented
        {"split": "held_out", "unsupported": False, "kind": k, "flagged": f, "blocked": b}
        for k, f, b in (
            ("short", False, False),
            ("short", False, False),
            ("paraphrase", True, False),
            ("mixed", True, True),
        )
    ] + [{"split": "held_out", "unsupported": True, "kind": "short", "flagged": True}]
    shown = _right_shown(rows, "held_out")
    assert shown["all"] == {"unmarked": 2, "marked": 1, "blocked": 1}
    assert shown["paraphrase"] == {"unmarked": 0, "marked": 1, "blocked": 0}
    blind: dict[str, dict[str, Any]] = {name: {"answers": 0} for name in BLIND_SETS}
    blind["fresh8"] = {"answers": 160, "right_shown": {"held_out": shown}}
    lines = _marked_lines(blind)
    assert lines[0] == "### Right answers marked in flag mode"
    table = [line for line in "\n".join(lines).splitlines() if line.startswith("| ")]
    assert table[1:] == [
        "| fresh8 | 0.50 (2/4) | 0.25 (1/4) | 0.25 (1/4) |",
        "| all | 0.50 (2/4) | 0.25 (1/4) | 0.25 (1/4) |",
    ]
    assert "short 0%, paraphrase 100%, followup 0%, mixed 0%" in lines[-2]
