"""The README's ten-line example runs as written, with the embedded model, and finds the
supporting sentence."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import camab_rag

README = Path(__file__).resolve().parents[1] / "README.md"


def readme_example() -> str:
    text = README.read_text(encoding="utf-8")
    section = text.split("## In ten lines", 1)[1]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    assert match, "the README lost its ten-line example"
    return match.group(1)


def test_the_example_is_ten_lines_of_code():
    lines = [line for line in readme_example().splitlines() if line.strip()]
    assert len(lines) <= 12


@pytest.mark.model
def test_the_readme_example_runs_and_cites_the_right_sentence(smollm2_scorer, monkeypatch, capsys):
    monkeypatch.setattr(camab_rag, "default_scorer", lambda: smollm2_scorer)
    exec(compile(readme_example(), str(README), "exec"), {})
    printed = capsys.readouterr().out.splitlines()
    assert len(printed) == 2
    assert printed[0].endswith("Gustave Eiffel's company designed the tower.")
    top_score = float(printed[0].split()[0])
    second_score = float(printed[1].split()[0])
    assert top_score > 1.0 > second_score


def readme_citations_example() -> str:
    section = README.read_text(encoding="utf-8").split("## Citations, groundedness", 1)[1]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    assert match, "the README lost its citations example"
    return match.group(1)


@pytest.mark.model
def test_the_readme_citations_example_runs_after_the_first(smollm2_scorer, monkeypatch, capsys):
    monkeypatch.setattr(camab_rag, "default_scorer", lambda: smollm2_scorer)
    namespace: dict[str, object] = {}
    exec(compile(readme_example(), str(README), "exec"), namespace)
    exec(compile(readme_citations_example(), str(README), "exec"), namespace)
    printed = capsys.readouterr().out
    assert "designed it.[1]" in printed and "[1] Document 3" in printed  # cites Eiffel's
    shown = namespace["shown"]
    assert shown == "Gustave Eiffel's company designed it."  # grounded: passes unchanged
    assert namespace["report"].source == "observed"  # type: ignore[attr-defined]
