"""The citation benchmark's choice on dev rows: a candidate must meet the targets on the
ten-paragraph dev rows (precision >= 0.90, a distractor in <= 10% of answers) before its
score counts; ties go to the first in the list (pure logic, fake rules)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

import benchmarks.bench_citations as bench


def _items(answers: str) -> list[Any]:
    """One answer per letter, each with paragraphs 0 and 1 gold of ten."""
    docs = [{"title": str(i), "text": ""} for i in range(10)]
    return [(None, docs, {0, 1}, answer) for answer in answers]


def one_gold(_result: Any, _docs: Any, _answer: str) -> set[int]:
    return {0}


def both_gold(_result: Any, _docs: Any, _answer: str) -> set[int]:
    return {0, 1}


def both_and_a_distractor_on_d(_result: Any, _docs: Any, answer: str) -> set[int]:
    return {0, 1, 5} if answer == "d" else {0, 1}


def test_a_candidate_that_misses_the_targets_on_dev_is_not_chosen(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The distractor rule scores best (20 + 10 - 2 * 2 = 26 against 15) but cites a
    distractor in 2 of 10 dev answers (20% > 10%): the rule that meets the targets wins."""
    dev, earlier = _items("dd" + "x" * 8), _items("x" * 5)
    candidates = [("one gold", one_gold), ("distractor on d", both_and_a_distractor_on_d)]
    monkeypatch.setattr(bench, "CANDIDATES", candidates)
    chosen, rows = bench.choice(dev, earlier)
    assert chosen == "one gold"
    assert [row[5] for row in rows] == ["yes", "no"] and [row[-1] for row in rows] == [15, 26]
    # ties go to the first; with none meeting the targets, the best score wins
    monkeypatch.setattr(bench, "CANDIDATES", [*candidates, ("both gold", both_gold)][::-1])
    assert bench.choice(dev, earlier)[0] == "both gold"
    monkeypatch.setattr(bench, "CANDIDATES", [("once", one_gold), ("twice", one_gold)])
    assert bench.choice(dev, earlier)[0] == "once"
    monkeypatch.setattr(bench, "CANDIDATES", candidates[1:])
    assert bench.choice(dev, earlier)[0] == "distractor on d"


def test_the_report_says_how_many_answers_took_the_halves() -> None:
    """Rows ``auto`` read with the random halves are counted and said to be re-priced;
    none, nothing is said."""

    def item(design: str) -> Any:
        return (SimpleNamespace(method_config={"design": design}), [], set(), "")

    said = bench._halves_note([item("random_halves"), item("adaptive"), item("random_halves")])
    assert said.startswith(" `auto` read 2 of the 3 answers with ContextCite's random halves")
    assert "re-priced" in said
    assert bench._halves_note([item("adaptive")]) == ""
