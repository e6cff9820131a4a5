"""``python -m benchmarks NAME``: every name runs a module's ``main``; no benchmark reads
another benchmark's insides (only the shared modules and its own family's)."""

from __future__ import annotations

import ast
import importlib
import sys
from pathlib import Path

import pytest

from benchmarks import BENCHMARKS
from benchmarks.__main__ import main

PACKAGE = Path(__file__).resolve().parents[1]
SHARED = {"_report", "data", "stats", "workload"}


@pytest.mark.parametrize("name", sorted(BENCHMARKS))
def test_every_name_runs_a_main(name: str) -> None:
    assert callable(importlib.import_module(BENCHMARKS[name][0]).main)


def test_an_unknown_name_lists_the_names(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["nope"]) == 2
    listed = capsys.readouterr().err
    assert all(name in listed for name in BENCHMARKS)
    assert listed.startswith("unknown benchmark 'nope'") and "$CAMAB_BENCH_DATA" in listed
    assert main(["--help"]) == 0  # asked for: on stdout (review 16: `| less` showed nothing)
    assert "usage: python -m benchmarks NAME" in capsys.readouterr().out


def test_no_benchmark_imports_another_benchmarks_insides() -> None:
    def family(stem: str) -> str:
        return stem.removeprefix("bench_").split("_")[0]

    for path in PACKAGE.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("benchmarks."):
                target = (node.module or "").split(".")[1]
                if target in SHARED:
                    continue
                assert family(target) == family(path.stem), f"{path.name} imports {target}"


@pytest.mark.parametrize("name", sorted(BENCHMARKS))
def test_every_name_prints_its_flags_and_runs_nothing(
    name: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import benchmarks.bench_robustness as robustness

    def ran(*_args: object) -> None:
        raise AssertionError("--help ran the benchmark")

    monkeypatch.setattr(robustness, "hostile", ran)  # it once ran whatever its arguments
    monkeypatch.setattr(robustness, "dead_server", ran)
    monkeypatch.setattr(sys, "argv", sys.argv[:1])
    with pytest.raises(SystemExit) as done:
        main([name, "--help"])
    assert done.value.code == 0
    assert f"usage: python -m benchmarks {name}" in capsys.readouterr().out
