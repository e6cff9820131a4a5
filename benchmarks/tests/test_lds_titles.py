"""``lds-design titles``: the two placements of a title, and their table (no model)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from types import SimpleNamespace
from typing import Any

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
    candidate = lds_titles.replayed_auto(line, "text", example, lds_titles.CANDIDATES[32])
    assert shipped > 0.9 and candidate > 0.9
    del table[bits(np.ones(9, dtype=bool))]
    assert math.isnan(lds_titles.replayed_auto(line, "text", example))
    assert math.isnan(lds_titles.replayed_auto(line, "text", example, lds_titles.CANDIDATES[32]))
    assert math.isnan(lds_titles.replayed_auto({"text": {}}, "text", example))  # LDS alone


def test_the_models_rows_have_their_own_file_table_and_reading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--answer model`` rows: their own file and intro, and the reading fixed before them
    on each side of its line; the gold rows' file is not read."""
    monkeypatch.setattr(lds_titles, "TITLES_CHECK", tmp_path / "absent.jsonl")
    path = tmp_path / "model.jsonl"
    monkeypatch.setattr(lds_titles, "TITLES_MODEL_CHECK", path)
    assert lds_titles.check_file("model") == path
    assert lds_titles.titles_section("gold") == "No row stored yet."

    def section(gaps: list[float]) -> list[str]:
        rows = [
            {"id": f"r{i}", "budget": 32, "answer": "It was 1999."}
            | {p: {"auto": 0.6 + g, "contextcite": 0.6} for p in ("text", "template")}
            for i, g in enumerate(gaps)
        ]
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
        return lds_titles.titles_section("model").split("\n\n")

    intro, _, _, reading = section([-0.05, -0.03, -0.04])
    assert intro == lds_titles.MODEL_INTRO
    assert "is -0.040 ± " in reading and "over 3 rows" in reading
    assert (
        "below the line: the default template costs `auto` on the model's "
        "own answers too, and a rule for it would key on the template." in reading
    )
    reading = section([0.0, -0.01, -0.02])[-1]
    assert "is -0.010 ± " in reading and "at or above the line" in reading
    assert reading.endswith("holds the line too: a reading by the mean, not a finding.")
    assert section([0.10, 0.11, 0.12])[-1].endswith("lies wholly on that side.")


def test_the_models_answer_is_its_greedy_reply_to_the_full_prompt_titles_in_the_text() -> None:
    asked = []

    class Replies:  # records the prompts; the model's side is the scorer's own test
        def generate(self, prompts: list[object], *, max_new_tokens: int) -> list[str]:
            asked.append((prompts, max_new_tokens))
            return ["  She was owned by a writer.\n"]

    example = SimpleNamespace(question="Who owned Asgard?", documents=[PARAGRAPH])
    assert lds_titles.model_answer(example, Replies()) == "She was owned by a writer."
    [(prompts, tokens)] = asked
    assert tokens == lds_titles.ANSWER_TOKENS == 48
    content = str(prompts[0][-1]["content"])  # type: ignore[index]
    assert "Asgard: Asgard is a yacht. She was owned by a writer." in content
    assert "Who owned Asgard?" in content


def test_the_candidate_gives_no_verdict_where_it_switches_no_row() -> None:
    rows: list[dict[str, Any]] = [{"id": "a", "budget": 32}, {"id": "b", "budget": 32}]
    same: lds_titles.Replays = {
        (str(x["id"]), p): (0.5, 0.5, 0.5) for x in rows for p in lds_titles.PLACEMENTS
    }
    words = lds_titles._candidate_words(rows, same)
    assert words.endswith("changes no row's LDS in either placement: no answer here is unlikely.")
    moved = same | {("a", "text"): (0.5, 0.6, 0.5)}
    words = lds_titles._candidate_words(rows, moved)
    assert "moves `auto`'s LDS by +0.050 ± " in words and "it passes this check." in words
    assert "from 32 calls and 0.25 calls a unit" in words
    assert words.endswith(
        "it waits on that benchmark's rows re-priced under it, as the switch from 40 calls "
        "did ('The library's default budget' below)."
    )  # passing, not shipped
    fails = lds_titles._candidate_words(rows, same | {("a", "text"): (0.5, 0.4, 0.5)})
    assert fails.endswith("it fails this check (it had to gain in the text and on both).")


def test_the_candidate_is_read_against_the_switch_as_it_was() -> None:
    # once a candidate ships, `auto` as it ships is the candidate: the verdict must still
    # compare it with the switch it replaced (BEFORE), not with itself
    rows: list[dict[str, Any]] = [{"id": "a", "budget": 40}, {"id": "b", "budget": 40}]
    shipped: lds_titles.Replays = {
        (str(x["id"]), p): (0.6, 0.6, 0.6) for x in rows for p in lds_titles.PLACEMENTS
    }
    shipped |= {("a", "text"): (0.6, 0.6, 0.4), ("a", "template"): (0.5, 0.5, 0.7)}
    words = lds_titles._candidate_words(rows, shipped)
    assert "from 40 calls and 0.5 calls a unit" in words
    assert "by +0.100 ± " in words and "-0.100 ± " in words
    assert words.endswith(
        "it passes this check. It had two more tests to pass: 'The library's default budget' below."
    )
    worse = shipped | {("a", "template"): (0.5, 0.5, 0.9)}
    assert lds_titles._candidate_words(rows, worse).endswith(
        "it fails this check (it had to gain in the text and on both). It had two more tests "
        "to pass: 'The library's default budget' below."
    )


def test_the_prior_candidate_is_read_once_on_its_own_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rows before line 100 or at other budgets do not count; it is read at 20 rows."""
    first, count = lds_titles.PRIOR_ROWS
    old: list[dict[str, Any]] = [{"id": f"o{i}", "budget": 16} for i in range(first)]
    new: list[dict[str, Any]] = [{"id": f"n{i}", "budget": 16} for i in range(count)]
    other = [{"id": "x", "budget": 32}]
    assert lds_titles.prior_words(old + other + new[:-1]).endswith(
        f"{count - 1} of its {count} rows priced, not read yet."
    )
    read: list[str] = []

    def replay(line: dict[str, Any], placement: str, example: Any, **options: Any) -> float:
        read.append(line["id"])
        gain = 0.05 if placement == "text" else -0.02  # the candidate, per placement
        return 0.5 + (gain if options else 0.0)

    monkeypatch.setattr(lds_titles, "_examples", lambda rows: {x["id"]: x for x in rows})
    monkeypatch.setattr(lds_titles, "replayed_auto", replay)
    words = lds_titles.prior_words(old + other + new + [{"id": "late", "budget": 16}])
    assert set(read) == {x["id"] for x in new}
    assert "by +0.050 ± 0.000 with the title in the text and -0.020 ± 0.000" in words
    assert "it passes" in words and words.endswith("`auto` does not ship it.")
    monkeypatch.setattr(lds_titles, "replayed_auto", lambda *a, **o: 0.5 - (0.01 if o else 0))
    assert "it fails" in lds_titles.prior_words(old + new)
