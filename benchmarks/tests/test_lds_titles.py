"""``lds-design titles``: the two placements of a title, and their table (no model)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from benchmarks import lds_titles
from benchmarks.data import bits
from camab_rag.segments import segment_documents, to_documents

PARAGRAPH = {"title": "Asgard", "text": "Asgard is a yacht. She was owned by a writer."}


def rendered(placement: str, keep: list[bool]) -> str:
    docs, factory = lds_titles.placed(SimpleNamespace(documents=[PARAGRAPH]), placement)
    documents = to_documents(docs)
    builder = factory("Who owned Asgard?", documents, segment_documents(documents, "sentence"))
    return str(builder.build(np.array(keep))[-1]["content"])


def test_a_title_in_the_text_goes_with_the_first_sentence_and_in_the_template_stays() -> None:
    assert "Asgard: Asgard is a yacht." in rendered("text", [True, False])
    assert "Asgard:" not in rendered("text", [False, True])
    assert "Asgard: She was owned by a writer." in rendered("template", [False, True])
    assert "Asgard:" not in rendered("template", [False, False])  # no sentence: no title


def test_the_table_pairs_each_rows_gap_across_placements(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "titles.jsonl"
    pairs = [((0.5, 0.7), (0.6, 0.5)), ((0.6, 0.6), (0.7, 0.6))]  # (auto, ContextCite)
    rows = [
        {"id": f"r{i}", "budget": 32}
        | {p: dict(zip(lds_titles.METHODS, v)) for p, v in zip(("text", "template"), x)}
        for i, x in enumerate(pairs)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    monkeypatch.setattr(lds_titles, "TITLES_CHECK", path)
    intro, table, verdict = lds_titles.titles_section().split("\n\n")
    assert intro == lds_titles.TITLES_INTRO
    line = table.splitlines()[-1].split(" | ")
    assert line[:2] == ["| 32", "2"]
    assert line[4].startswith("-0.100 ± ") and line[8].startswith("0.100 ± ")
    assert line[5] == line[9] == "–"  # no stored rewards: no replay
    assert line[10].startswith("0.200 ± ")  # +0.3 and +0.1 moved, paired
    assert verdict.startswith("At 32 calls, on 2 rows, the move (+0.200) is not told from zero")


def test_a_row_replays_auto_from_its_rewards_and_says_nan_when_one_is_missing() -> None:
    """Every subset of 9 sentences priced (a linear reward, unlikely at the full context):
    ``auto`` as it ships and the candidate both replay and rank the held-out subsets as
    the reward does; without the full context's reward neither replays."""
    paragraphs = [
        {"title": f"T{d}", "text": " ".join(f"Fact {d}{k} is here." for k in range(3))}
        for d in range(3)
    ]
    example = SimpleNamespace(documents=paragraphs)
    weights = np.arange(1, 10) / 10.0
    table = {}
    for code in range(2**9):
        mask = np.array([(code >> i) & 1 for i in range(9)], dtype=bool)
        table[bits(mask)] = float(mask @ weights) / 4.5 - 3.0  # -2.0 at the full context
    held = [bits(m) for m in np.random.default_rng(1).random((16, 9)) < 0.5]
    line = {"answer": "Fact 11", "budget": 32, "text": {"rewards": table, "held": held}}
    shipped = lds_titles.replayed_auto(line, "text", example)
    candidate = lds_titles.replayed_auto(line, "text", example, lds_titles.CANDIDATE)
    assert shipped > 0.9 and candidate > 0.9
    del table[bits(np.ones(9, dtype=bool))]
    assert math.isnan(lds_titles.replayed_auto(line, "text", example))
    assert math.isnan(lds_titles.replayed_auto(line, "text", example, lds_titles.CANDIDATE))
    assert math.isnan(lds_titles.replayed_auto({"text": {}}, "text", example))  # LDS alone
