"""``camab attribute --proxy``: a chat-only server's answer scored by the proxy model, and
said so in the output (the core's proxy scorer is tested in ``tests/test_proxy.py``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from chat_only_server import ChatOnlyServer
from test_proxy import ANSWER, DOCUMENTS, QUESTION

from camab_cli.cli import main


def test_cli_proxy_needs_a_server(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "record.json"
    path.write_text(json.dumps({"question": QUESTION, "documents": DOCUMENTS}), encoding="utf-8")
    assert main(["attribute", str(path), "--proxy", "smollm2"]) != 0
    assert "--proxy" in capsys.readouterr().err


@pytest.mark.model
def test_cli_scores_a_chat_only_server_with_the_proxy(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    smollm2_scorer: object,
) -> None:
    from camab_cli import cli

    monkeypatch.setattr(cli, "local_scorer", lambda model, threads, progress: smollm2_scorer)
    record = {"question": QUESTION, "documents": DOCUMENTS, "response": ANSWER}
    path = tmp_path / "record.json"
    path.write_text(json.dumps(record), encoding="utf-8")
    json_out, text_out = tmp_path / "out.json", tmp_path / "out.txt"
    with ChatOnlyServer(lambda messages: ANSWER) as server:
        run = ["attribute", str(path), "--budget", "8", "--granularity", "chunk"]
        run += ["--base-url", server.base_url, "--model-name", server.model, "--no-groundedness"]
        with_proxy = [*run, "--proxy", "smollm2"]
        assert main([*with_proxy, "--format", "json", "--out", str(json_out)]) == 0
        assert main([*with_proxy, "--format", "terminal", "--out", str(text_out)]) == 0
        capsys.readouterr()
        without_proxy = main([*run, "--format", "json"])
    attribution = json.loads(json_out.read_text(encoding="utf-8"))["attribution"]
    assert attribution["scored_by"]["model"] == "smollm2"
    assert attribution["scored_by"]["proxy"] is True
    assert attribution["n_queries"] == 8 and attribution["scores"][0] > attribution["scores"][1]
    assert "Attributed by a proxy model (smollm2)" in text_out.read_text(encoding="utf-8")
    assert without_proxy != 0  # no proxy: the server's model cannot score, as before
    assert "--proxy" in capsys.readouterr().err  # the error says what to do
