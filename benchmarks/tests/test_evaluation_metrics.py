"""Evaluation metrics and dataset loaders on hand-computed cases."""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest_data import HOTPOTQA, TYDIQA

from benchmarks import stats as bench_stats
from benchmarks.data import (
    dataset_path,
    load_examples,
    normalize_answer,
    parse_hotpotqa,
    parse_row,
    parse_tydiqa,
)
from benchmarks.evaluation import metrics as M
from benchmarks.evaluation.report import build_report
from camab_rag.errors import InputError
from camab_rag.prompts import TemplatePromptBuilder
from camab_rag.scorers.base import BaseScorer, Prompt, ResponseLogprobs, ScoreRequest
from camab_rag.segments import segment_documents, to_documents


# ---------------------------------------------------------------- rankings and drops
def test_top_k_breaks_ties_by_position() -> None:
    assert M.top_k([0.5, 0.9, 0.5, 0.1], 3) == [1, 0, 2]
    assert M.top_k([1.0, 2.0], 0) == []


def test_removal_set_is_index_ordered_and_capped() -> None:
    assert M.removal_set([0.5, 0.9, 0.5, 0.1], 3) == (0, 1, 2)
    assert M.removal_set([0.2, 0.1], 5) == (0, 1)  # k above N removes every segment
    assert M.removal_set([0.2, 0.1], 0) == ()


def test_kept_segments_orders_removal_sets_by_shared_prompt_head() -> None:
    assert M.kept_segments(5, (1, 3)) == (0, 2, 4)
    assert M.kept_segments(3, ()) == (0, 1, 2)
    sets = [(0,), (3,), (1,), (2, 3)]
    # prompts keeping 0, 1, 2 first come first; neighbours share their longest heads
    assert sorted(sets, key=lambda r: M.kept_segments(4, r)) == [(2, 3), (3,), (1,), (0,)]


def test_removal_mask_and_drop() -> None:
    assert M.removal_mask(4, [1, 3]).tolist() == [True, False, True, False]
    assert M.logprob_drop(-0.5, -1.25) == pytest.approx(0.75)


# ---------------------------------------------------------------- gold alignment
def test_gold_alignment_hand_computed() -> None:
    scores = [0.9, 0.8, 0.7, 0.6]
    gold = [0, 2]
    got = M.gold_alignment(scores, gold)
    assert got["p@1"] == 1.0
    assert got["f1@2"] == pytest.approx(0.5)  # top-2 = {0, 1}: P = R = 1/2
    assert got["f1@k*"] == pytest.approx(0.5)
    assert got["auroc"] == pytest.approx(0.75)  # pairs: 0>1, 0>3, 2<1, 2>3
    assert got["ap"] == pytest.approx(0.5 * 1 + 0.5 * 2 / 3)


def test_auroc_extremes_and_ties() -> None:
    assert M.auroc([0.9, 0.1, 0.5, 0.3], [0, 2]) == 1.0
    assert M.auroc([0.2, 0.8, 0.5, 0.1], [0, 3]) == 0.0
    assert M.auroc([1.0, 1.0, 0.0], [0]) == pytest.approx(0.75)
    assert math.isnan(M.auroc([1.0, 2.0], [0, 1]))


def test_f1_and_precision_with_misses() -> None:
    assert M.f1_at_k([0.1, 0.9, 0.8], [0], 2) == 0.0
    assert M.precision_at_k([0.1, 0.9, 0.8], [1], 1) == 1.0
    # k* = 3 gold, top-3 hits 2: P = R = 2/3
    assert M.f1_at_k([5, 4, 3, 2, 1], [0, 1, 4], 3) == pytest.approx(2 / 3)


def test_gold_errors_are_clear() -> None:
    with pytest.raises(ValueError, match="outside"):
        M.auroc([0.1, 0.2], [5])
    with pytest.raises(ValueError, match="at least one gold"):
        M.average_precision([0.1, 0.2], [])


def test_average_precision_matches_scikit_learn_with_ties() -> None:
    metrics_mod = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(3)
    for _ in range(50):
        n = int(rng.integers(3, 15))
        scores = np.round(rng.normal(size=n), 1)  # rounding makes ties
        gold = sorted(set(rng.choice(n, size=int(rng.integers(1, n)), replace=False).tolist()))
        labels = np.isin(np.arange(n), gold)
        expected_ap = metrics_mod.average_precision_score(labels, scores)
        assert M.average_precision(scores, gold) == pytest.approx(expected_ap)
        if not labels.all():
            expected_auc = metrics_mod.roc_auc_score(labels, scores)
            assert M.auroc(scores, gold) == pytest.approx(expected_auc)


# ---------------------------------------------------------------- answers and statistics
def test_hotpotqa_normalisation() -> None:
    assert normalize_answer("The  Eiffel Tower!") == "eiffel tower"
    assert M.answer_contains_gold("It is the Eiffel tower, in Paris.", ["Eiffel Tower"])
    assert not M.answer_contains_gold("The Eiffel Towers", ["Eiffel Tower"])
    assert M.answer_contains_gold("an apple.", ["Apple"])
    assert not M.answer_contains_gold("anything", [""])


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


def test_comparison_table_keeps_only_differences_that_survive_holm() -> None:
    from benchmarks.evaluation.report import comparison_table

    sign = np.array([1.0, -1.0] * 5)  # 10 examples
    camab_minus_shap = {
        "1": -0.5 + 0.01 * sign,  # far below: holds after any correction
        "3": -0.08 + 0.1 * sign,  # t = -2.4, p = 0.04: "worse" alone, not among 3 tests
        "5": 0.0 * sign,  # no difference
    }
    records = [
        {
            "methods": {
                "camab": {"budgets": {"40": {"drop": {k: 1.0 for k in camab_minus_shap}}}},
                "kernelshap": {
                    "budgets": {
                        "40": {"drop": {k: 1.0 - d[i] for k, d in camab_minus_shap.items()}}
                    }
                },
            }
        }
        for i in range(10)
    ]
    text = comparison_table(records, "40", has_gold=False)
    row3 = next(line for line in text.splitlines() if line.startswith("| log-prob drop@3"))
    assert "**CAMAB worse**" in row3  # the per-cell 95% verdict is unchanged
    summary = text.splitlines()[-1]
    assert summary.startswith("Corrected for all 3 comparisons in this table (Holm-Bonferroni")
    assert "log-prob drop@1 ↑ vs KernelSHAP (CAMAB worse, adjusted p = " in summary
    assert "drop@3" not in summary and "drop@5" not in summary
    records[0]["methods"]["camab"]["budgets"]["40"]["drop"]["1"] = 1.0 - 5.0  # one outlier
    summary = comparison_table(records, "40", has_gold=False).splitlines()[-1]
    assert summary.endswith(", no difference holds.")


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


def test_hotpotqa_segments_are_the_dataset_sentences() -> None:
    example = parse_hotpotqa(HOTPOT_ROW)
    assert example is not None
    assert example.segment_texts == ["Ann was born.", "She wrote books.", "Bob lived.", "He sang."]
    assert example.gold == [1, 2]  # ("C", 0) is not in the context: dropped
    segments = segment_documents(to_documents(example.documents), example.granularity())
    assert [s.text for s in segments] == example.segment_texts
    assert [s.doc_index for s in segments] == [0, 0, 1, 1]


def test_tydiqa_gold_is_the_sentence_with_the_answer() -> None:
    passage = "Paris is big. The capital of France is Paris. It has a tower."
    start = passage.index("capital")
    row = {
        "id": "t1",
        "language": "english",
        "title": "Paris",
        "question": "What is the capital of France?",
        "passage": passage,
        "answers": [{"text": "capital", "answer_start": start}],
    }
    example = parse_tydiqa(row)
    assert example is not None and example.gold == [1]
    assert example.segment_texts[1] == "The capital of France is Paris."


def test_unknown_rows_and_names_fail_clearly(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="unrecognised row"):
        parse_row({"foo": 1})
    with pytest.raises(InputError, match="unknown dataset"):
        load_examples("no_such_dataset")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"foo": 1}\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"bad\.jsonl:1"):
        load_examples(bad)


def test_jsonl_path_in_the_same_format(tmp_path: Path) -> None:
    path = tmp_path / "mine.jsonl"
    path.write_text(json.dumps(HOTPOT_ROW) + "\n", encoding="utf-8")
    (example,) = load_examples(path)
    assert example.id == "h1" and example.n_segments == 4


def test_trimmed_keeps_gold_documents() -> None:
    example = parse_hotpotqa(HOTPOT_ROW)
    assert example is not None
    small = example.trimmed(3)
    assert small.n_segments == 3
    assert [small.segment_texts[i] for i in small.gold or []] == ["She wrote books.", "Bob lived."]


# ---------------------------------------------------------------- the real shap peer
def _user_text(prompt: Prompt) -> str:
    """The last message of a chat prompt (the fakes here are only given chat prompts)."""
    assert not isinstance(prompt, str)
    return prompt[-1]["content"]


class _LinearScorer(BaseScorer):
    """Reward = sum of the weights of the segments present in the prompt (a linear game)."""

    def __init__(self, texts: list[str], weights: list[float]) -> None:
        self.texts, self.weights = texts, weights

    def score(self, requests: Sequence[ScoreRequest]) -> list[ResponseLogprobs]:
        out = []
        for request in requests:
            content = _user_text(request.prompt)
            value = sum(w for t, w in zip(self.texts, self.weights) if t in content)
            out.append(ResponseLogprobs(np.array([value - 5.0]), np.array([0]), prompt_tokens=10))
        return out


def test_shap_peer_recovers_a_linear_game() -> None:
    pytest.importorskip("shap")
    from benchmarks.evaluation.peers import run_shap

    texts = ["Alpha one.", "Beta two.", "Gamma three.", "Delta four."]
    documents = to_documents([" ".join(texts)])
    segments = segment_documents(documents, "sentence")
    builder = TemplatePromptBuilder("q?", documents, segments)
    weights = [0.5, -0.2, 1.5, 0.0]
    # 2^4 - 2 = 14 coalitions + reference + full = 16 evaluations: exact Shapley values
    result = run_shap(builder, _LinearScorer(texts, weights), "r", budget=16, seed=0)
    np.testing.assert_allclose(result.scores, weights, atol=1e-6)
    assert result.n_queries == 16


def test_report_says_where_camab_loses() -> None:
    def fit(drop: float, auroc: float) -> dict[str, object]:
        return {
            "scores": [0.0],
            "drop": {"1": drop, "3": drop, "5": drop},
            "gold": {"p@1": 1.0, "f1@2": 1.0, "f1@k*": 1.0, "auroc": auroc, "ap": 1.0},
        }

    records: list[dict[str, Any]] = []
    for i in range(5):
        records.append(
            {
                "id": str(i),
                "status": "ok",
                "dataset": "hotpotqa",
                "model": "m",
                "gold": [0],
                "answer_correct": True,
                "config": {"budgets": [20, 40], "peer_budget": 40, "seed": 0},
                "methods": {
                    name: {
                        "budget": 40,
                        "n_queries": 40,
                        "prompt_tokens": 4000,
                        "wall_time_s": 1.0,
                        "mean_subset_size": 0.5,
                        "budgets": {"20": fit(d - 0.1, a), "40": fit(d + 0.01 * i, a)},
                    }
                    for name, d, a in (("camab", 0.2, 0.6), ("kernelshap", 0.5, 0.9))
                },
            }
        )
    text = build_report(records)
    assert "**CAMAB worse**" in text
    assert "5 examples" in text
    # KernelSHAP reaches CAMAB@20's AUROC already at s=20
    assert "| KernelSHAP | 20 |" in text
    assert "AUROC by language" not in text  # one language
    # several languages: one AUROC row per language, the best method in bold
    for i, record in enumerate(records):
        record["language"] = "swahili" if i < 2 else "finnish"
    records[0]["methods"]["camab"]["budgets"]["40"]["gold"]["auroc"] = 1.0
    records[1]["methods"]["camab"]["budgets"]["40"]["gold"]["auroc"] = 1.0
    text = build_report(records)
    assert "#### AUROC by language at s=40" in text
    assert "| finnish (3) | 0.600 | **0.900** |" in text
    assert "| swahili (2) | **1.000** | 0.900 |" in text


def test_cost_table_reports_a_median_wall_time_robust_to_one_paused_example() -> None:
    from benchmarks.evaluation.report import cost_table

    walls = [10.0, 12.0, 11.0, 9.0, 6000.0]  # the last example sat paused for 100 minutes
    records = [
        {
            "methods": {
                "camab": {
                    "budget": 40,
                    "n_queries": 40,
                    "prompt_tokens": 4000 + i,
                    "wall_time_s": wall,
                    "mean_subset_size": 0.5,
                }
            }
        }
        for i, wall in enumerate(walls)
    ]
    table = cost_table(records)
    assert "| wall s / example | median wall s | total prompt tokens |" in table
    row = next(line for line in table.splitlines() if line.startswith("| CAMAB |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[6].startswith("1208.4 ± ")  # the mean, inflated by the pause
    assert cells[7] == "11.0"
    assert cells[8] == "20,010"


def test_missing_bench_packages_fail_before_any_model_call(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from benchmarks.evaluation import runner

    monkeypatch.setattr(runner, "find_spec", lambda name: None)
    config = runner.BenchConfig(dataset="hotpotqa", n=1, out_dir=str(tmp_path))
    with pytest.raises(InputError, match=r"\.\[bench\]"):
        runner.run_benchmark(config, scorer=object())
    assert not list(tmp_path.iterdir())


class _CrashingScorer(_LinearScorer):
    """The linear game, plus greedy 'generation'; raises on the ``crash_at``-th score call."""

    def __init__(self, texts: list[str], weights: list[float], crash_at: int | None) -> None:
        super().__init__(texts, weights)
        self.crash_at = crash_at
        self.calls = 0

    def score(self, requests: Sequence[ScoreRequest]) -> list[ResponseLogprobs]:
        self.calls += 1
        if self.crash_at is not None and self.calls == self.crash_at:
            raise RuntimeError("killed")
        return super().score(requests)

    def generate(self, prompts: Sequence[Prompt], *, max_new_tokens: int = 128) -> list[str]:
        return ["Ann wrote books." for _ in prompts]


def test_a_run_killed_mid_example_resumes_where_it_stopped(tmp_path: Path) -> None:
    from benchmarks.evaluation import runner

    data = tmp_path / "mine.jsonl"
    data.write_text(json.dumps(HOTPOT_ROW) + "\n", encoding="utf-8")
    texts = ["Ann was born.", "She wrote books.", "Bob lived.", "He sang."]
    weights = [0.1, 0.8, 0.0, -0.1]
    config = runner.BenchConfig(
        dataset=str(data),
        n=1,
        budgets=[4, 8],
        methods=["camab", "kernelshap", "loo", "random"],
        out_dir=str(tmp_path / "fresh"),
    )
    fresh = _CrashingScorer(texts, weights, crash_at=None)
    runner.run_benchmark(config, fresh, use_bert=False)
    (first,) = runner.read_results(config.results_path)
    camab_calls = first["methods"]["camab"]["n_queries"]  # one score call per new subset
    assert first["methods"]["camab"]["budgets"]["8"]["gold"]["p@1"] == 1.0  # "She wrote books."
    # score calls: the full-context reward, CAMAB's, then KernelSHAP's first: killed there
    config.out_dir = str(tmp_path / "out")
    crashing = _CrashingScorer(texts, weights, crash_at=1 + camab_calls + 1)
    with pytest.raises(RuntimeError, match="killed"):
        runner.run_benchmark(config, crashing, use_bert=False)
    assert not config.results_path.exists()
    resumed = _CrashingScorer(texts, weights, crash_at=None)
    runner.run_benchmark(config, resumed, use_bert=False)
    # the resumed run skipped the full-context reward and CAMAB
    assert resumed.calls == fresh.calls - 1 - camab_calls
    (second,) = runner.read_results(config.results_path)
    assert first["methods"]["camab"]["budgets"] == second["methods"]["camab"]["budgets"]
    assert (tmp_path / "out" / "mine_smollm2.partial.jsonl").read_text() == ""


def _two_example_run(tmp_path: Path, **overrides: Any) -> Any:
    """A 2-example HotpotQA-format dataset and the config of a run over it."""
    from benchmarks.evaluation import runner

    data = tmp_path / "two.jsonl"
    rows = [HOTPOT_ROW, {**HOTPOT_ROW, "id": "h2"}]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    settings: dict[str, Any] = {
        "dataset": str(data),
        "n": 2,
        "budgets": [4, 8],
        "methods": ["camab", "kernelshap", "loo", "random"],
        "out_dir": str(tmp_path / "whole"),
    }
    return runner.BenchConfig(**{**settings, **overrides})


def _linear_scorer() -> _CrashingScorer:
    texts = ["Ann was born.", "She wrote books.", "Bob lived.", "He sang."]
    return _CrashingScorer(texts, [0.1, 0.8, 0.0, -0.1], crash_at=None)


def test_the_eval_command_reports_a_finished_run_without_loading_a_model(
    tmp_path: Path, capsys
) -> None:
    from benchmarks.evaluation import runner
    from benchmarks.evaluation.cli import main

    whole = _two_example_run(tmp_path)
    runner.run_benchmark(whole, _linear_scorer(), use_bert=False)
    before = whole.results_path.read_bytes()
    argv = ["--dataset", whole.dataset, "--n", "2", "--budgets", "4,8", "--no-bert"]
    argv += ["--methods", "camab,kernelshap,loo,random", "--out", whole.out_dir]
    assert main(argv) == 0  # every example done: no scorer is loaded
    captured = capsys.readouterr()
    assert "2 done already, 0 to run" in captured.err
    assert "### HotpotQA, smollm2: 2 examples" in captured.out
    assert whole.results_path.read_bytes() == before
    assert main([*argv, "--budgets", "1"]) == 2  # a budget below 2 is refused by name
    assert "budgets must be" in capsys.readouterr().err


def test_an_append_after_a_torn_last_line_keeps_the_new_record(tmp_path: Path) -> None:
    from benchmarks.evaluation import runner

    path = tmp_path / "results.jsonl"
    path.write_text('{"id": "a"}\n{"id": "b", "metho', encoding="utf-8")  # killed mid-write
    runner.append_record(path, {"id": "c"})
    assert [r["id"] for r in runner.read_results(path)] == ["a", "c"]
    assert runner.done_ids(path) == {"a", "c"}


def test_multilingual_data_is_taken_round_robin_across_languages(tmp_path) -> None:
    nine = load_examples(TYDIQA, 9)
    languages = [e.language for e in nine]
    assert len(set(languages)) == 9  # one of each language, not nine Arabic rows
    eighteen = load_examples(TYDIQA, 18)
    assert [e.id for e in eighteen[:9]] == [e.id for e in nine]
    assert [e.language for e in eighteen[9:]] == languages  # then the second of each
    # rows without a language field keep file order (and stop reading early)
    hotpot = load_examples(HOTPOTQA, 3)
    with open(HOTPOTQA, encoding="utf-8") as handle:
        first = [json.loads(next(handle))["id"] for _ in range(3)]
    assert [e.id for e in hotpot] == first


def test_a_dataset_name_reads_the_benchmark_data_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CAMAB_BENCH_DATA", str(tmp_path))
    with pytest.raises(InputError, match="dataset file not found") as missing:
        dataset_path("tydiqa")
    assert "--dataset data/hotpotqa_dev_sample.jsonl" in str(missing.value)  # the shipped one
    (tmp_path / "tydiqa_goldp_dev.jsonl").write_bytes(TYDIQA.read_bytes())
    assert dataset_path("tydiqa") == tmp_path / "tydiqa_goldp_dev.jsonl"
    assert len(load_examples("tydiqa", 9)) == 9


def _two_example_file(tmp_path: Path) -> Path:
    second = {**HOTPOT_ROW, "id": "h2"}
    data = tmp_path / "mine.jsonl"
    data.write_text(json.dumps(HOTPOT_ROW) + "\n" + json.dumps(second) + "\n", encoding="utf-8")
    return data


def test_random_baseline_is_seeded_per_example(tmp_path: Path) -> None:
    from benchmarks.evaluation import runner

    config = runner.BenchConfig(
        dataset=str(_two_example_file(tmp_path)),
        n=2,
        budgets=[4],
        methods=["random"],
        out_dir=str(tmp_path / "out"),
    )
    texts = ["Ann was born.", "She wrote books.", "Bob lived.", "He sang."]
    runner.run_benchmark(
        config, _CrashingScorer(texts, [0.1, 0.8, 0.0, -0.1], None), use_bert=False
    )
    first, second = runner.read_results(config.results_path)
    seeds = [r["methods"]["random"]["seed"] for r in (first, second)]
    assert seeds == [runner.example_seed(0, "h1"), runner.example_seed(0, "h2")]
    assert seeds[0] != seeds[1]
    # same segments, same run seed: different random scores (one seed for all would
    # give the same vector, a ranking by position)
    scores = [r["methods"]["random"]["budgets"]["4"]["scores"] for r in (first, second)]
    assert scores[0] != scores[1]
    expected = np.random.default_rng(seeds[0]).uniform(size=4)
    assert scores[0] == pytest.approx(expected.tolist(), abs=1e-6)


def test_execution_settings_stay_out_of_records(tmp_path: Path) -> None:
    from benchmarks.evaluation import runner
    from benchmarks.evaluation.cli import add_bench_arguments, config_from_args

    parser = argparse.ArgumentParser()
    add_bench_arguments(parser)
    data = _two_example_file(tmp_path)
    args = ["--dataset", str(data), "--n", "1", "--budgets", "4", "--methods", "random"]
    config = config_from_args(
        parser.parse_args([*args, "--out", str(tmp_path), "--prefix-cache", "--batch-size", "1"])
    )
    assert config.prefix_cache and config.batch_size == 1
    texts = ["Ann was born.", "She wrote books.", "Bob lived.", "He sang."]
    runner.run_benchmark(config, _CrashingScorer(texts, [0.0] * 4, None), use_bert=False)
    (record,) = runner.read_results(config.results_path)
    # a run resumed with or without the cache (or another batch size) continues the file
    assert not set(runner.EXECUTION_SETTINGS) & set(record["config"])


class _LoggingScorer(_CrashingScorer):
    """The linear game; logs every score and generate call with the context it saw, and
    'regenerates' the first kept sentence."""

    def __init__(self, texts: list[str], weights: list[float]) -> None:
        super().__init__(texts, weights, crash_at=None)
        self.log: list[tuple[str, str]] = []

    def score(self, requests: Sequence[ScoreRequest]) -> list[ResponseLogprobs]:
        self.log += [("score", _user_text(r.prompt)) for r in requests]
        return super().score(requests)

    def generate(self, prompts: Sequence[Prompt], *, max_new_tokens: int = 128) -> list[str]:
        self.log += [("generate", _user_text(p)) for p in prompts]
        return [next((t for t in self.texts if t in _user_text(p)), "") for p in prompts]


def test_prefix_cache_run_scores_each_prompt_right_before_regenerating_it(
    tmp_path: Path,
) -> None:
    from benchmarks.evaluation import runner

    texts = ["Ann was born.", "She wrote books.", "Bob lived.", "He sang."]
    weights = [0.1, 0.8, 0.3, -0.1]

    def bert(candidates: list[str], references: list[str]) -> list[float]:
        return [float(len(c)) for c in candidates]

    records, logs = [], []
    for prefix_cache in (False, True):
        config = runner.BenchConfig(
            dataset=str(_two_example_file(tmp_path)),
            n=1,
            budgets=[4, 8],
            methods=["camab", "kernelshap", "loo", "random"],
            out_dir=str(tmp_path / f"cache{prefix_cache}"),
            batch_size=1,
            prefix_cache=prefix_cache,
        )
        scorer = _LoggingScorer(texts, weights)
        runner.run_benchmark(config, scorer, bert=bert)
        (record,) = runner.read_results(config.results_path)
        records.append(record)
        logs.append(scorer.log)
    # the same record either way (drop and BERTScore of every top-k set)
    plain, cached = ({m: e["budgets"] for m, e in r["methods"].items()} for r in records)
    assert plain == cached
    assert cached["loo"]["own"]["bert"]["1"] == float(len("Ann was born."))  # top-1 = seg 1 out
    # every regeneration of a removal set directly follows the scoring of the same prompt
    # (the first generation is the response itself, under the full context)
    generations = [i for i, (kind, _) in enumerate(logs[1]) if kind == "generate"][1:]
    assert len(generations) >= 2
    for i in generations:
        assert logs[1][i - 1] == ("score", logs[1][i][1])
    # without the cache, the regenerations come together after all the scoring
    kinds = [kind for kind, _ in logs[0]]
    assert kinds[-len(generations) :] == ["generate"] * len(generations)


def test_the_call_counter_passes_the_inner_capacity_through() -> None:
    from test_auto_batch import ParallelScorer, PlainScorer

    from benchmarks.evaluation.counting import CountingScorer
    from camab_rag.scorers.base import parallel_requests

    assert parallel_requests(CountingScorer(ParallelScorer(5))) == 5
    assert parallel_requests(CountingScorer(PlainScorer())) == 1
