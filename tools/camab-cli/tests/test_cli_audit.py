"""`camab audit` is reachable from the `camab` command."""

from __future__ import annotations

from camab_cli.cli import build_parser, main


def test_audit_is_a_camab_subcommand():
    args = build_parser(["audit"]).parse_args(["audit", "in.jsonl", "--out", "out.jsonl"])
    assert args.input == "in.jsonl" and args.out == "out.jsonl"
    assert args.handler.__name__ == "run_audit"


def test_audit_of_a_missing_file_is_a_clear_error(tmp_path, capsys):
    missing = tmp_path / "nope.jsonl"
    status = main(["audit", str(missing), "--out", str(tmp_path / "out.jsonl"), "--no-progress"])
    assert status == 2
    assert "nope.jsonl" in capsys.readouterr().err
