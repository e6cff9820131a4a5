"""The proxy benchmark's ``--redo-auto``: only lines priced before the day are re-priced,
in place and in order, the rest byte for byte (pure logic: ``auto`` and the data faked)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import pytest

import benchmarks.bench_proxy as proxy


def test_redo_auto_reprices_only_lines_priced_before_the_day(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lines = [
        {"id": "a", "rewards": {"1": -1.0}, "auto": {"scores": [0.1], "cost": 40}},
        {
            "id": "b",
            "rewards": {"1": -2.0},
            "auto": {"scores": [0.2], "cost": 40, "priced": "2026-12-06"},
        },
        {
            "id": "c",
            "rewards": {"1": -3.0},
            "auto": {"scores": [0.3], "cost": 40, "priced": "2026-11-30"},
        },
        {"id": "d", "rewards": {"1": -4.0}, "auto": {"scores": [0.4], "cost": 40}},
    ]
    out = tmp_path / "run.smollm2.jsonl"
    out.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    monkeypatch.setattr(proxy, "OUT", tmp_path)
    priced: list[str] = []

    def fake_auto(_scorer: Any, record: dict[str, Any], _example: Any) -> dict[str, Any]:
        priced.append(record["id"])
        return {"scores": [9.0], "cost": 39, "priced": "2026-12-06"}

    monkeypatch.setattr(proxy, "_auto_line", fake_auto)
    args = argparse.Namespace(results="run", redo_auto="2026-12-06")
    records = [{"id": i} for i in ("a", "b", "c")]  # "d": not among the chosen records
    examples: dict[str, Any] = {r["id"]: r for r in records}  # read by the fake alone
    proxy._redo_auto(args, object(), records, examples)
    assert priced == ["a", "c"]
    stored = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert [x["id"] for x in stored] == ["a", "b", "c", "d"]
    assert [x["auto"]["scores"] for x in stored] == [[9.0], [0.2], [9.0], [0.4]]
    assert [x["rewards"] for x in stored] == [x["rewards"] for x in lines]
    assert not (tmp_path / "run.smollm2.jsonl.part").exists()
