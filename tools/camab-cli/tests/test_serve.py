"""``camab serve``: one command starts a real vLLM server on 127.0.0.1 and prints its URL.

Under ``scripts/run_tests.sh`` the suite's shared server *is* ``camab serve`` (its stdout in
``CAMAB_TEST_VLLM_SERVE_OUT``), so the test reads what it printed instead of booting a
second server; run alone, the test starts the command itself and stops it with Ctrl-C.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from vllm_server import free_port, require_vllm

from camab_cli.cli import main
from camab_cli.serve import model_directory
from camab_rag.errors import InputError
from camab_rag.scorers.base import ScoreRequest
from camab_rag.scorers.openai_completions import OpenAICompletionsScorer

REQUEST = ScoreRequest("Q: What is the capital of France?\nA:", " Paris is the capital.")


def test_a_local_model_directory_is_served_under_its_name(tmp_path: Path) -> None:
    model = tmp_path / "my-model"
    model.mkdir()
    with pytest.raises(InputError, match="not an embedded model"):
        model_directory(str(model))  # no config.json: not a transformers directory
    (model / "config.json").write_text("{}", encoding="utf-8")
    assert model_directory(str(model)) == (model.resolve(), "my-model")


def test_serve_without_vllm_and_no_install_says_how_to_install(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    venv = tmp_path / "no-vllm"
    assert main(["serve", "--venv", str(venv), "--no-install"]) == 1
    err = capsys.readouterr().err
    assert str(venv) in err and "scripts/setup_vllm.sh" in err
    assert not venv.exists()  # nothing installed
    assert main(["serve", "--port", "70000"]) == 2


def _wait_for_line(path: Path, timeout: float = 600.0) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        text = path.read_text(encoding="utf-8") if path.exists() else ""
        if text.endswith("\n"):
            return text.splitlines()[0]
        time.sleep(1.0)
    raise AssertionError(f"camab serve printed no base_url into {path} in {timeout:.0f} s")


def _check_scores(base_url: str, smollm2_scorer) -> None:
    """The server answers with the embedded model's log-probs (float32, as in process)."""
    (served,) = OpenAICompletionsScorer(base_url, "smollm2", timeout=120).score([REQUEST])
    (local,) = smollm2_scorer.score([REQUEST])
    assert served.tokens == local.tokens
    np.testing.assert_allclose(served.logprobs, local.logprobs, atol=1e-3)


@pytest.mark.server
@pytest.mark.model
def test_camab_serve_prints_the_base_url_of_a_server_that_scores(
    smollm2_scorer, tmp_path: Path
) -> None:
    shared_port, shared_out = (
        os.environ.get("CAMAB_TEST_VLLM_PORT"),
        os.environ.get("CAMAB_TEST_VLLM_SERVE_OUT"),
    )
    if shared_port and shared_out:  # run_tests.sh started the shared server with camab serve
        base_url = _wait_for_line(Path(shared_out))
        assert base_url == f"http://127.0.0.1:{shared_port}/v1"
        _check_scores(base_url, smollm2_scorer)
        return
    require_vllm()
    port = free_port()
    command = [sys.executable, "-m", "camab_cli.cli", "serve", "--port", str(port)]
    command += ["--no-install", "--log", str(tmp_path / "vllm.log")]
    with open(tmp_path / "stderr", "wb") as stderr:
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=stderr, text=True)
    try:
        assert process.stdout is not None
        line = process.stdout.readline()  # printed once healthy ("" if the command died)
        assert line == f"http://127.0.0.1:{port}/v1\n", (tmp_path / "stderr").read_text()
        _check_scores(line.strip(), smollm2_scorer)
        process.send_signal(signal.SIGINT)  # Ctrl-C stops the server with the command
        assert process.wait(60) == 0
        with pytest.raises(OSError):
            socket.create_connection(("127.0.0.1", port), timeout=2).close()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
