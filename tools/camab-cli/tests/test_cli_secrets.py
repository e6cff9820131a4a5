"""No fault of a server makes ``camab attribute`` show a credential (issue 37): the
command-line path of ``tests/test_secrets.py``, against the same scripted endpoint."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest
from credential_echo import URLS, CredentialEcho
from test_http_faults import RESPONSE, FaultyServer
from test_secrets import DOCUMENTS, FAULTS, KEY, PASSWORD, QUESTION, secret_url

from camab_cli.cli import main

CLI_FAULTS = [  # those the command line's scorer (3 s retry budget, 60 s timeout) meets fast
    "ok",
    "429 echoing",
    "400 echoing",
    "400 logprobs echoing",
    "401 echoing",
    "403 echoing",
    "404 echoing",
    "404 chat model echoing",
    "no logprobs",
]


@pytest.fixture
def server() -> Iterator[FaultyServer]:
    fake = FaultyServer()
    yield fake
    fake.close()


def shown_by_the_cli(
    url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> list[str]:
    monkeypatch.setenv("CAMAB_TEST_KEY", KEY)
    records = tmp_path / "r.jsonl"
    record = {"question": QUESTION, "documents": DOCUMENTS, "response": RESPONSE}
    records.write_text(json.dumps(record) + "\n", encoding="utf-8")
    arguments = ["attribute", str(records), "--base-url", url, "--model-name", "smollm2"]
    arguments += ["--api-key-env", "CAMAB_TEST_KEY", "--budget", "4", "--format", "json"]
    main([*arguments, "--no-groundedness"])
    captured = capsys.readouterr()
    return [captured.out, captured.err]


@pytest.mark.parametrize("fault", CLI_FAULTS)
def test_no_fault_makes_the_command_line_show_a_credential(
    server: FaultyServer,
    fault: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    server.default = FAULTS[fault]
    server.tokenize = {}  # the command line renders chat prompts through /tokenize
    with caplog.at_level(logging.DEBUG):
        shown = shown_by_the_cli(secret_url(server), tmp_path, monkeypatch, capsys)
    assert server.completions, f"{fault}: the command line asked nothing"
    # it holds the key and the password, not the header's token
    for text in [*shown, caplog.text, *(str(r.args) for r in caplog.records)]:
        assert KEY not in text and PASSWORD not in text, f"{fault}: {text[:300]!r}"


@pytest.mark.parametrize("case", list(URLS))
def test_an_audit_writes_no_form_of_a_url_credential(
    case: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Issue 50: a password that needs encoding (or a token given as the user), echoed back
    decoded by the server, reached the audit's output and summary files on main. HTTP 500,
    as in the issue: the audit now retries within the scorer's 3 s budget only."""
    records = tmp_path / "in.jsonl"
    record = {"id": "r1", "question": QUESTION, "documents": DOCUMENTS, "response": RESPONSE}
    records.write_text(json.dumps(record) + "\n", encoding="utf-8")
    out, summary = tmp_path / "out.jsonl", tmp_path / "summary.json"
    arguments = ["audit", str(records), "--out", str(out), "--summary", str(summary)]
    arguments += ["--model-name", "smollm2", "--budget", "4", "--no-progress"]
    with CredentialEcho(500) as echo, caplog.at_level(logging.DEBUG):
        status = main([*arguments, "--base-url", echo.url(URLS[case])])
        forms = echo.forms(case)
    assert status == 1 and len(echo.tokens) >= 3  # tokenized, then refused and retried
    [line] = [json.loads(text) for text in out.read_text(encoding="utf-8").splitlines()]
    assert line["status"] == "error" and "rejected credentials ***" in line["error"]
    captured = capsys.readouterr()
    shown = [out.read_text("utf-8"), summary.read_text("utf-8"), captured.out, captured.err]
    for text in [*shown, caplog.text, *(str(r.args) for r in caplog.records)]:
        for form in forms:
            assert form not in text, f"{case}: {form!r} shown in {text[:300]!r}"
