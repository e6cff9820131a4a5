"""`make lint`'s commit-subject check, on a throwaway repository."""

from __future__ import annotations

import importlib.util
import subprocess
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "check_commits.py"


def _commit(repo: Path, subject: str) -> str:
    run = {"cwd": repo, "check": True, "capture_output": True, "text": True}
    subprocess.run(["git", "commit", "-q", "--allow-empty", "-m", subject], **run)  # type: ignore[call-overload]
    return str(subprocess.run(["git", "rev-parse", "HEAD"], **run).stdout.strip())  # type: ignore[call-overload]


def test_long_subjects_after_the_baseline_fail(tmp_path, monkeypatch, capsys):
    spec = importlib.util.spec_from_file_location("check_commits", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    monkeypatch.chdir(tmp_path)
    for key, value in {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org"}.items():
        monkeypatch.setenv(key, value)
        monkeypatch.setenv(key.replace("AUTHOR", "COMMITTER"), value)
    _commit(tmp_path, "x" * 100)  # before the baseline: left alone
    monkeypatch.setattr(module, "SINCE", _commit(tmp_path, "baseline"))
    _commit(tmp_path, "y" * 72)
    assert module.main() == 0
    _commit(tmp_path, "é" * 73)  # characters, not bytes
    assert module.main() == 1
    assert "(73 characters)" in capsys.readouterr().out
    monkeypatch.setattr(module, "SINCE", "0" * 40)
    assert module.main() == 0  # a clone without the baseline: nothing to check


@pytest.fixture(autouse=True)
def _no_global_git_config(monkeypatch, tmp_path):
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(tmp_path / "no-gitconfig"))
