"""The benchmark's --smoke run end to end with the real SmolLM2, and its resumability."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from conftest_data import HOTPOTQA

from benchmarks.evaluation.cli import add_bench_arguments, config_from_args
from benchmarks.evaluation.counting import CountingScorer
from benchmarks.evaluation.report import write_report
from benchmarks.evaluation.runner import ALL_METHODS, run_benchmark

if TYPE_CHECKING:
    from camab_rag.scorers.transformers_scorer import TransformersScorer

pytestmark = pytest.mark.model


def _smoke_args(out: Path, *extra: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks eval")
    add_bench_arguments(parser)
    return parser.parse_args(["--smoke", "--out", str(out), *extra])


def test_bench_parser_rejects_unknown_methods(tmp_path: Path) -> None:
    with pytest.raises(SystemExit):
        _smoke_args(tmp_path, "--methods", "camab,nope")


def test_smoke_run_end_to_end_and_resume(
    smollm2_scorer: TransformersScorer, tmp_path: Path
) -> None:
    pytest.importorskip("shap")
    pytest.importorskip("context_cite")
    pytest.importorskip("bert_score")
    config = config_from_args(_smoke_args(tmp_path, "--dataset", str(HOTPOTQA)))
    scorer = CountingScorer(smollm2_scorer)
    path = run_benchmark(config, scorer)
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert len(records) == config.n == 2
    assert len({r["id"] for r in records}) == 2
    small, large = config.budgets[0], config.budgets[-1]
    for record in records:
        assert record["status"] == "ok", record.get("reason")
        assert record["response"].strip()
        n = record["n_segments"]
        assert 2 <= n <= config.max_segments
        assert set(record["methods"]) == set(ALL_METHODS)
        for name, entry in record["methods"].items():
            for fit in entry["budgets"].values():
                assert len(fit["scores"]) == n
                assert set(fit["drop"]) == {"1", "3", "5"}
                assert set(fit["lds"]) == {"bernoulli", "removal", "keep"}
                assert set(fit["gold"]) == {"p@1", "f1@2", "f1@k*", "auroc", "ap"}
                assert 0.0 <= fit["gold"]["ap"] <= 1.0
            if name == "loo":
                assert entry["n_queries"] == n + 1
                assert set(entry["budgets"]) == {"own"}
            elif name in ("shap-pkg", "contextcite-pkg"):
                assert entry["n_queries"] <= config.peer_budget
            elif name == "random":
                assert entry["n_queries"] == 0
            else:
                assert 1 <= entry["n_queries"] <= large
                assert entry["budgets"][str(small)]["cost"] <= small
        # BERTScore after regeneration at the largest smoke budget (and for the peers)
        camab_bert = record["methods"]["camab"]["budgets"][str(large)]["bert"]
        assert all(-1.0 <= v <= 1.0 for v in camab_bert.values())
        assert "bert" in record["methods"]["shap-pkg"]["budgets"][str(config.peer_budget)]
        # removing the top segment of a full-context answer changes its log-prob
        assert record["full_logprob"] < 0
    before = path.read_bytes()
    used = scorer.snapshot()
    again = run_benchmark(config, scorer)
    assert again == path
    assert path.read_bytes() == before  # nothing appended
    assert scorer.snapshot() == used  # no model call at all
    markdown = write_report(path, tmp_path)
    assert "HotpotQA, smollm2: 2 examples" in markdown
    assert "Top-k log-probability drop" in markdown
    assert (tmp_path / "plots" / "hotpotqa_smollm2_budget.png").stat().st_size > 1000
    assert (tmp_path / "plots" / "hotpotqa_smollm2_posterior.png").stat().st_size > 1000
