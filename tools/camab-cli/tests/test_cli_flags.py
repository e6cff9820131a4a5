"""The command line's errors name its flags, and an error that holds for every record stops
the run once (fresh-user review 8), against a real scripted server on 127.0.0.1."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fakes import KeywordScorer
from test_http_faults import RESPONSE, FaultyServer

from camab_cli.audit import audit
from camab_cli.cli import main

QUESTION = "Who wrote Dune?"
DOCUMENTS = ["Dune is a novel by Frank Herbert.", "Paris is the capital of France."]
NOT_SERVED: tuple[Any, ...] = (
    "status",
    404,
    {},
    {"error": {"message": "The model `nope` does not exist."}},
)
PYTHON_WORDS = ("model=", "api_key", "base_url", "deadline_s", "budget=", "timeout=")


@pytest.fixture
def server() -> Iterator[FaultyServer]:
    fake = FaultyServer()
    fake.tokenize = {}  # the command line renders chat prompts through /tokenize
    yield fake
    fake.close()


def records(tmp_path: Path, n: int = 3, documents: list[str] = DOCUMENTS) -> Path:
    path = tmp_path / "in.jsonl"
    rows = [
        {"id": f"r{k}", "question": QUESTION, "documents": documents, "response": RESPONSE}
        for k in range(n)
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def scorer_flags(server: FaultyServer, *more: str) -> list[str]:
    return ["--base-url", server.base_url, "--model-name", "nope", "--budget", "4", *more]


def test_a_model_the_server_does_not_serve_stops_the_audit_once(
    server: FaultyServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`camab audit` met the 404 once per record, each with a /v1/models look-up, and
    wrote an error line for each, saying "pass model=": one error, naming the flag."""
    server.default = NOT_SERVED
    out = tmp_path / "out.jsonl"
    arguments = ["audit", str(records(tmp_path)), "--out", str(out), "--no-progress"]
    status = main([*arguments, *scorer_flags(server, "--concurrency", "1")])
    err = capsys.readouterr().err
    assert status == 2
    expected = (
        f"camab audit: error: model 'nope' is not served at {server.base_url}: pass "
        "--model-name one of the names its /v1/models lists"
    )
    assert expected in err and err.count("is not served") == 1
    assert not any(word in err for word in PYTHON_WORDS)
    assert len(server.completions) == 1  # the first record's one request, not one each
    assert out.read_text(encoding="utf-8") == ""  # nothing done: a re-run audits all
    summary = json.loads((tmp_path / "out.jsonl.summary.json").read_text(encoding="utf-8"))
    assert "pass --model-name one of the names" in summary["stopped"]


def test_a_model_the_server_does_not_serve_stops_camab_attribute_once(
    server: FaultyServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server.default = NOT_SERVED
    arguments = ["attribute", str(records(tmp_path)), "--format", "json", "--quiet"]
    status = main([*arguments, *scorer_flags(server, "--no-groundedness")])
    err = capsys.readouterr().err
    assert status == 2
    assert "pass --model-name one of the names its /v1/models lists" in err
    assert "(stopped at record 1 of 3)" in err and err.count("is not served") == 1
    assert not any(word in err for word in PYTHON_WORDS)
    assert len(server.completions) == 1


@pytest.mark.parametrize("variable", [None, "CAMAB_TEST_KEY"])
def test_a_refused_key_names_the_api_key_env_flag(
    variable: str | None,
    server: FaultyServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    server.default = ("status", 401, {}, {"error": {"message": "Invalid key"}})
    flags = scorer_flags(server, "--no-groundedness")
    if variable is not None:
        monkeypatch.setenv(variable, "sk-test-not-a-real-key")
        flags += ["--api-key-env", variable]
    arguments = ["attribute", str(records(tmp_path)), "--format", "json", "--quiet"]
    assert main([*arguments, *flags]) == 2
    err = capsys.readouterr().err
    if variable is None:
        assert "no key was sent: pass --api-key-env VAR" in err
    else:
        assert f"check the key in ${variable} (--api-key-env {variable})" in err
        assert "sk-test-not-a-real-key" not in err
    assert err.count("refused the request") == 1 and len(server.completions) == 1
    assert not any(word in err for word in PYTHON_WORDS)


def test_a_budget_past_the_call_limit_names_the_budget_flag(
    server: FaultyServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Per record (it depends on the record's context), refused before any call."""
    sentences = [f"Fact {k} is about item {k}." for k in range(20)]
    arguments = ["attribute", str(records(tmp_path, 1, sentences)), "--format", "json", "-q"]
    flags = [*scorer_flags(server, "--no-groundedness")[:-3], "--budget", "5000"]
    assert main([*arguments, *flags]) == 1
    err = capsys.readouterr().err
    assert "--budget 5000 would make 5000 model calls for this context of 20 segments" in err
    assert "pass a smaller --budget (the default is 40) or --granularity chunk" in err
    assert not any(word in err for word in PYTHON_WORDS) and server.completions == []


def test_a_server_that_refuses_connections_stops_the_audit_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Review 6: with nothing listening at --base-url, `camab audit` failed every record
    after its retries and summarised it as rate limiting; it now stops at the first,
    naming the flag."""
    from vllm_server import free_port

    url = f"http://127.0.0.1:{free_port()}/v1"
    out = tmp_path / "out.jsonl"
    arguments = ["audit", str(records(tmp_path)), "--out", str(out), "--no-progress"]
    flags = ["--base-url", url, "--model-name", "m", "--budget", "4", "--concurrency", "1"]
    assert main([*arguments, *flags]) == 2
    err = capsys.readouterr().err
    assert "nothing accepts connections there: is it running? check --base-url" in err
    assert err.count("nothing accepts connections") == 1 and url in err
    assert not any(word in err for word in PYTHON_WORDS)
    summary = json.loads((tmp_path / "out.jsonl.summary.json").read_text(encoding="utf-8"))
    assert "check --base-url" in summary["stopped"]


def test_a_rerun_after_a_stop_writes_every_line_in_input_order(
    server: FaultyServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Review 48 (5): a stop on a wrong --model-name wrote the error line of a bad input
    line read ahead (line 2), so the re-run appended lines 1 and 3 after it."""
    path = records(tmp_path)
    rows = path.read_text(encoding="utf-8").splitlines()
    path.write_text(f"{rows[0]}\nnot json\n{rows[2]}\n", encoding="utf-8")
    out = tmp_path / "out.jsonl"
    arguments = ["audit", str(path), "--out", str(out), "--no-progress", "--no-groundedness"]
    server.default = NOT_SERVED
    assert main([*arguments, *scorer_flags(server)]) == 2
    assert out.read_text(encoding="utf-8") == ""  # no stray line from the failed run
    summary = audit(path, out, scorer=KeywordScorer(), progress=False)  # the fixed model
    assert summary["records"]["audited_this_run"] == 2
    capsys.readouterr()
    lines = [json.loads(raw) for raw in out.read_text(encoding="utf-8").splitlines()]
    assert [line["line"] for line in lines] == [1, 2, 3]
    assert [line["status"] for line in lines] == ["ok", "error", "ok"]
    assert lines[1]["bad_input"] is True


def test_a_url_answering_404_everywhere_stops_the_audit_naming_the_url(
    server: FaultyServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Review 48 (6): the chat-template advice ("--proxy smollm2") for a wrong URL."""
    server.get_status = 404
    server.default = ("status", 404, {}, {"detail": "Not Found"})
    server.tokenize = None
    monkeypatch.setenv("CAMAB_TEST_KEY", "sk-test-not-a-real-key")
    out = tmp_path / "out.jsonl"
    arguments = ["audit", str(records(tmp_path)), "--out", str(out), "--no-progress"]
    flags = [*scorer_flags(server), "--api-key-env", "CAMAB_TEST_KEY"]
    assert main([*arguments, *flags]) == 2
    err = capsys.readouterr().err
    assert f"no OpenAI-compatible server at {server.base_url}: " in err
    assert "check --base-url, which ends with /v1" in err and err.count("no OpenAI") == 1
    assert "proxy" not in err and "sk-test-not-a-real-key" not in err
    assert not any(word in err for word in PYTHON_WORDS) and server.completions == []
