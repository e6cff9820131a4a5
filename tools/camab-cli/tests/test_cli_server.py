"""``camab attribute --base-url`` against a real vLLM server on 127.0.0.1 (the session's
``vllm_server``), checked against the in-process scorer on the same model."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from vllm_server import VLLMServer

import camab_rag
from camab_cli.cli import main
from camab_rag.groundedness import assess_groundedness

pytestmark = [pytest.mark.server, pytest.mark.model]


def test_cli_attributes_through_the_server(
    vllm_server: VLLMServer, smollm2_scorer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``camab attribute --base-url`` against the real server gives the in-process model's
    attribution (leave-one-out: deterministic subsets, so the scores must agree)."""
    record = {
        "id": "france",
        "question": "What is the capital of France?",
        "documents": [
            {"title": "Paris", "text": "Paris is the capital of France."},
            {"title": "Berlin", "text": "Berlin is the capital of Germany."},
            {"title": "Seine", "text": "The Seine flows through Paris."},
        ],
        "response": "The capital of France is Paris.",
    }
    path = tmp_path / "record.json"
    path.write_text(json.dumps(record), encoding="utf-8")
    argv = ["attribute", str(path), "--base-url", vllm_server.base_url, "--model-name", "smollm2"]
    assert main([*argv, "--method", "loo", "--format", "json", "-q"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["id"] == "france" and out["response_generated"] is False
    attribution = out["attribution"]
    assert attribution["status"] == "ok" and attribution["method"] == "loo"
    local = camab_rag.attribute(
        record["question"], record["documents"], record["response"], smollm2_scorer, method="loo"
    )
    np.testing.assert_allclose(attribution["scores"], local.scores, atol=5e-3)
    # both paragraphs that mention Paris matter more than the Berlin one
    assert int(np.argmin(attribution["scores"])) == 1
    # the groundedness verdict: L(C) - L(empty), the empty context scored through the
    # server as an anchor of the attribution (LOO never scores it; inside the progress
    # bar's total), equal to the in-process measurement
    verdict = out["citations"]["groundedness"]
    assert verdict["source"] == "observed" and verdict["extra_queries"] == 0
    assert attribution["n_queries"] == len(record["documents"]) + 2
    local_verdict = assess_groundedness(local, context=record["documents"], scorer=smollm2_scorer)
    assert verdict["score"] == pytest.approx(local_verdict.score, abs=5e-3)
    # the calibrated verdict decides (score and word coverage), not score >= threshold
    assert verdict["grounded"] is (verdict["verdict"] != "unsupported")
    assert verdict["verdict"] == local_verdict.verdict
    # no response in the record: the server generates it, then it is attributed
    del record["response"]
    path.write_text(json.dumps(record), encoding="utf-8")
    assert main([*argv, "--budget", "6", "--format", "json", "-q", "--max-new-tokens", "12"]) == 0
    generated = json.loads(capsys.readouterr().out)
    assert generated["response_generated"] is True
    assert generated["attribution"]["response"].strip()
    assert 1 <= generated["attribution"]["n_queries"] <= 6
