"""``lds-design titles``: the two placements of a title, and their table (no model)."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from benchmarks import lds_titles
from camab_rag.segments import segment_documents, to_documents

PARAGRAPH = {"title": "Asgard", "text": "Asgard is a yacht. She was owned by a writer."}


def rendered(placement: str, keep: list[bool]) -> str:
    docs, factory = lds_titles._placed(SimpleNamespace(documents=[PARAGRAPH]), placement)
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
    line = lds_titles.titles_table().splitlines()[-1].split(" | ")
    assert line[:2] == ["| 32", "2"]
    assert line[4].startswith("-0.100 ± ") and line[8].startswith("0.100 ± ")
    assert line[5] == line[9] == "–"  # no stored rewards: no replay
    assert line[10].startswith("0.200 ± ")  # +0.3 and +0.1 moved, paired
    verdict = lds_titles.titles_verdict()
    assert verdict.startswith("At 32 calls, on 2 rows, the move (+0.200) is not told from zero")
