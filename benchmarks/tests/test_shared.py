"""The benchmarks' shared parts on hand-computed cases: removal sets and gold AUROC, the
statistics, the data loader and the results files."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from conftest_data import HOTPOTQA

from benchmarks import stats as bench_stats
from benchmarks.data import (
    append_record,
    dataset_path,
    examples_by_id,
    load_examples,
    make_builder,
    normalize_answer,
    parse_hotpotqa,
    parse_row,
    read_jsonl,
)
from camab_rag.errors import InputError


# ---------------------------------------------------------------- removal sets and AUROC
def test_removal_set_is_index_ordered_ties_by_position_and_capped() -> None:
    assert bench_stats.removal_set([0.5, 0.9, 0.5, 0.1], 3) == (0, 1, 2)
    assert bench_stats.removal_set([0.5, 0.9, 0.5, 0.1], 2) == (0, 1)  # the tie goes to index 0
    assert bench_stats.removal_set([0.2, 0.1], 5) == (0, 1)  # k above N removes every segment
    assert bench_stats.removal_set([0.2, 0.1], 0) == ()
    assert bench_stats.removal_set([0.1, 0.3, 0.1 + 0.2], 1) == (1,)  # float noise ties
    with pytest.raises(ValueError, match="k must be >= 0"):
        bench_stats.removal_set([0.2, 0.1], -1)


def test_removal_mask() -> None:
    assert bench_stats.removal_mask(4, [1, 3]).tolist() == [True, False, True, False]


def test_auroc_extremes_ties_and_errors() -> None:
    assert bench_stats.gold_auroc([0.9, 0.1, 0.5, 0.3], [0, 2]) == 1.0
    assert bench_stats.gold_auroc([0.2, 0.8, 0.5, 0.1], [0, 3]) == 0.0
    assert bench_stats.gold_auroc([1.0, 1.0, 0.0], [0]) == pytest.approx(0.75)
    assert bench_stats.gold_auroc([0.9, 0.8, 0.7, 0.6], [0, 2]) == pytest.approx(0.75)
    assert math.isnan(bench_stats.gold_auroc([1.0, 2.0], [0, 1]))
    with pytest.raises(ValueError, match="outside"):
        bench_stats.gold_auroc([0.1, 0.2], [5])
    with pytest.raises(ValueError, match="at least one gold"):
        bench_stats.gold_auroc([0.1, 0.2], [])


def test_auroc_matches_scikit_learn_with_ties() -> None:
    metrics_mod = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(3)
    for _ in range(50):
        n = int(rng.integers(3, 15))
        scores = np.round(rng.normal(size=n), 1)  # rounding makes ties
        gold = sorted(set(rng.choice(n, size=int(rng.integers(1, n)), replace=False).tolist()))
        labels = np.isin(np.arange(n), gold)
        if not labels.all():
            expected_auc = metrics_mod.roc_auc_score(labels, scores)
            assert bench_stats.gold_auroc(scores, gold) == pytest.approx(expected_auc)


# ---------------------------------------------------------------- statistics
def test_mean_ci_uses_student_t() -> None:
    mean, half, n = bench_stats.mean_ci([1.0, 2.0, 3.0])
    assert (mean, n) == (2.0, 3)
    assert half == pytest.approx(4.303 / math.sqrt(3))
    mean, half, n = bench_stats.mean_ci([float("nan"), 4.0])
    assert (mean, n) == (4.0, 1) and math.isnan(half)
    assert bench_stats.mean_ci([])[2] == 0


def test_paired_t_pvalue_matches_scipy_and_handles_degenerate_samples() -> None:
    from scipy import stats

    diffs = np.random.default_rng(3).normal(0.1, 0.3, size=25)
    expected = stats.ttest_1samp(diffs, 0.0).pvalue
    assert bench_stats.paired_t_pvalue([*diffs, float("nan")]) == pytest.approx(expected, rel=1e-9)
    assert bench_stats.paired_t_pvalue([0.25, 0.25, 0.25]) == 0.0  # no spread, not zero
    assert bench_stats.paired_t_pvalue([0.2, 0.2, 0.2]) < 1e-12  # float spread of equal values
    assert bench_stats.paired_t_pvalue([0.0, 0.0]) == 1.0
    assert math.isnan(bench_stats.paired_t_pvalue([0.5]))


def test_holm_adjust_hand_computed() -> None:
    # sorted 0.01, 0.03, 0.04 -> 3 x 0.01, max(0.03, 2 x 0.03), max(0.06, 1 x 0.04)
    assert bench_stats.holm_adjust([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    adjusted = bench_stats.holm_adjust([0.5, float("nan"), 0.02])  # nan is not in the family
    assert adjusted[0] == pytest.approx(0.5) and adjusted[2] == pytest.approx(0.04)
    assert math.isnan(adjusted[1])
    assert bench_stats.holm_adjust([0.03, 0.02]) == pytest.approx([0.04, 0.04])  # monotone
    assert bench_stats.holm_adjust([0.9, 0.8]) == [1.0, 1.0]  # capped at 1


# ---------------------------------------------------------------- datasets
HOTPOT_ROW = {
    "id": "h1",
    "question": "Who?",
    "answer": "Ann",
    "context": [
        ["A", ["Ann was born.", " She wrote books.", "  "]],
        ["B", ["Bob lived.", " He sang."]],
    ],
    "supporting_facts": [["A", 1], ["B", 0], ["C", 0]],
}


def test_hotpotqa_normalisation() -> None:
    assert normalize_answer("The  Eiffel Tower!") == "eiffel tower"
    assert normalize_answer("an apple.") == "apple"


def test_hotpotqa_segments_are_the_dataset_sentences_in_a_titled_prompt() -> None:
    example = parse_hotpotqa(HOTPOT_ROW)
    assert example is not None
    assert example.segment_texts == ["Ann was born.", "She wrote books.", "Bob lived.", "He sang."]
    assert example.gold == [1, 2]  # ("C", 0) is not in the context: dropped
    builder = make_builder(example)
    assert [s.text for s in builder.segments] == example.segment_texts
    assert [s.doc_index for s in builder.segments] == [0, 0, 1, 1]
    assert "A: Ann was born." in str(builder.build(np.ones(4, dtype=bool)))


def test_unknown_rows_and_names_fail_clearly() -> None:
    with pytest.raises(InputError, match="unrecognised row"):
        parse_row({"foo": 1})
    with pytest.raises(InputError, match="unknown dataset"):
        load_examples("no_such_dataset")


def test_a_dataset_name_reads_the_benchmark_data_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CAMAB_BENCH_DATA", str(tmp_path))
    with pytest.raises(InputError, match="dataset file not found") as missing:
        dataset_path("hotpotqa")
    assert "data/hotpotqa_dev_sample.jsonl" in str(missing.value)  # the shipped one
    (tmp_path / "hotpotqa_distractor_dev.jsonl").write_bytes(HOTPOTQA.read_bytes())
    assert dataset_path("hotpotqa") == tmp_path / "hotpotqa_distractor_dev.jsonl"
    hotpot = load_examples("hotpotqa", 3, offset=1)  # read in file order
    with open(HOTPOTQA, encoding="utf-8") as handle:
        ids = [json.loads(next(handle))["id"] for _ in range(4)]
    assert [e.id for e in hotpot] == ids[1:]


def test_an_append_after_a_torn_last_line_keeps_the_new_record(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    path.write_text('{"id": "a"}\n{"id": "b", "metho', encoding="utf-8")  # killed mid-write
    append_record(path, {"id": "c"})
    assert [r["id"] for r in read_jsonl(path)] == ["a", "c"]


def test_resume_runs_only_what_no_record_holds_and_loads_the_model_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import camab_rag
    from benchmarks.data import resume

    loaded: list[str] = []

    def load(model: str, **_: object) -> str:
        loaded.append(model)
        return model

    monkeypatch.setattr(camab_rag, "TransformersScorer", load)
    path = tmp_path / "runs.jsonl"
    path.write_text('{"id": "a", "v": 0}\n', encoding="utf-8")
    todo = [(name, name.upper()) for name in ("a", "b", "c")]
    resume(path, todo, lambda scorer, item: {"id": item.lower(), "v": scorer}, "m", 1)
    assert [(r["id"], r["v"]) for r in read_jsonl(path)] == [("a", 0), ("b", "m"), ("c", "m")]
    assert loaded == ["m"]
    resume(path, todo, lambda *_: pytest.fail("a stored record ran again"), "m", 1)
    assert loaded == ["m"]  # nothing left: no model loaded


def test_new_examples_skip_every_used_id_and_are_found_past_the_first_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from benchmarks import bench_lds

    rows = [json.loads(line) for line in HOTPOTQA.read_text(encoding="utf-8").splitlines()]
    rows = [{**rows[i % len(rows)], "id": f"row{i}"} for i in range(260)]
    data = tmp_path / "data"
    data.mkdir()
    (data / "hotpotqa_distractor_dev.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    monkeypatch.setenv("CAMAB_BENCH_DATA", str(data))
    results = tmp_path / "results"
    (results / "quality").mkdir(parents=True)
    (results / f"{bench_lds.STEMS[0]}.jsonl").write_text(json.dumps({"id": "row251"}) + "\n")
    (results / "quality" / "heldout_check.jsonl").write_text(json.dumps({"id": "row253"}) + "\n")
    monkeypatch.setattr(bench_lds, "RESULTS", results)
    monkeypatch.setattr(bench_lds, "HELD_OUT_CHECK", results / "quality" / "heldout_check.jsonl")
    titles = results / "quality" / "heldout_titles.jsonl"
    titles.write_text(json.dumps({"id": "row255"}) + "\n")
    monkeypatch.setattr(bench_lds, "TITLES_CHECK", titles)
    model = results / "quality" / "heldout_titles_model.jsonl"
    model.write_text(json.dumps({"id": "row256"}) + "\n")
    monkeypatch.setattr(bench_lds, "TITLES_MODEL_CHECK", model)
    like = {"seed": 7, "language": "english", "task": "qa", "response": "not copied"}
    new = bench_lds._new_records("hotpotqa", like, offset=250, count=7)
    assert [r["id"] for r in new] == ["row250", "row252", "row254"]
    assert {r["seed"] for r in new} == {7} and "response" not in new[0]
    assert new[0]["answers"] == [rows[250]["answer"]] and new[0]["gold"]
    # one record past the first len(records) + 200 rows: the whole file is read
    found = examples_by_id(new[:1])
    assert list(found) == ["row250"] and found["row250"].n_segments == new[0]["n_segments"]
