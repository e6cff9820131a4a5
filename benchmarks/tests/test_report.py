"""Where a benchmark's figures go: its detail to its topic file, its headline rows to the
one generated table of BENCHMARKS.md."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from benchmarks import _report


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(_report, "ROOT", tmp_path)
    monkeypatch.setattr(_report, "BENCHMARKS_MD", tmp_path / "BENCHMARKS.md")
    monkeypatch.setattr(_report, "RESULTS", tmp_path / "benchmarks" / "results")
    monkeypatch.setattr(_report, "HEADLINES", tmp_path / "benchmarks" / "results" / "h.json")
    monkeypatch.setattr(sys, "argv", ["python -m benchmarks NAME"])
    monkeypatch.setattr(_report, "ENTRY", None)  # restored after the test
    return tmp_path


def run_as(name: str) -> None:
    """What ``python -m benchmarks NAME`` sets: the command the figures record."""
    _report.ENTRY = name


def test_a_section_goes_to_its_topic_file_and_replaces_itself(repo: Path) -> None:
    run_as("c1")
    _report.write_section("gate", "Gate", "AUROC 0.70 ![p](benchmarks/results/plots/a.png)")
    run_as("c2")
    _report.write_section("gate", "Gate", "AUROC 0.73")
    run_as("c3")
    _report.write_section("scorer-smollm2", "Scorer", "900 tok/s")
    gate = (repo / "benchmarks" / "results" / "groundedness" / "README.md").read_text()
    assert "AUROC 0.73" in gate and "AUROC 0.70" not in gate and gate.count("## Gate") == 1
    assert "Command: `.venv/bin/python -m benchmarks c2`" in gate
    speed = (repo / "benchmarks" / "results" / "speed" / "README.md").read_text()
    assert "900 tok/s" in speed
    index = (repo / "BENCHMARKS.md").read_text()
    assert "[groundedness](benchmarks/results/groundedness/README.md) | Gate |" in index
    assert "AUROC" not in index  # the detail stays in the topic file


def test_links_from_the_repository_root_are_made_relative_to_the_topic_file(repo: Path) -> None:
    run_as("c")
    _report.write_section("lds", "LDS", "![plot](benchmarks/results/plots/lds.png)")
    text = (repo / "benchmarks" / "results" / "quality" / "README.md").read_text()
    assert "![plot](../plots/lds.png)" in text


def test_headline_rows_make_the_table_and_replace_their_own(repo: Path) -> None:
    run_as("x")
    _report.write_headline("gate", [["ROC AUC", "0.70", "lexical 0.61", "≥ 0.80 missed"]])
    run_as("y")
    _report.write_headline("gate", [["ROC AUC", "0.73", "lexical 0.61", "≥ 0.80 missed"]])
    run_as("z")
    _report.write_headline("lds", [["LDS at 8 calls", "0.52", "lexical 0.30", "–"]])
    index = (repo / "BENCHMARKS.md").read_text()
    row = "| [gate](benchmarks/results/groundedness/README.md) | ROC AUC | 0.73 | lexical 0.61 |"
    assert row in index and "0.70" not in index and "`python -m benchmarks y`" in index
    assert "| LDS at 8 calls | 0.52 | lexical 0.30 | – | `python -m benchmarks z` |" in index
    assert index.index("LDS at 8 calls") > index.index("ROC AUC")  # sorted by benchmark


def test_a_headline_row_without_its_baseline_is_refused(repo: Path) -> None:
    run_as("x")
    with pytest.raises(ValueError, match="4 cells"):
        _report.write_headline("gate", [["ROC AUC", "0.73"]])
    assert not (repo / "BENCHMARKS.md").exists()
