"""``lds-design likely`` and ``floor``: which rows a test reads, and its verdict (no
model)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from benchmarks import lds_likely


def _line(
    row: int, shape: str, candidate: float, auto: float = 0.5, peer: float = 0.5
) -> dict[str, Any]:
    lds = {"auto": auto, "candidate": candidate, "contextcite": peer, "lexical": 0.2}
    drop = {"auto": 1.0, "candidate": 1.0, "contextcite": 1.0, "lexical": 0.5}
    return {
        "id": f"{shape}{row}",
        "row": row,
        "shape": shape,
        "likely": True,
        "seconds": 60,
        "replay_matches_auto": True,
        "lds": {"bernoulli": dict(lds), "keep": dict(lds)},
        "drop": drop,
    }


@pytest.fixture
def rows(tmp_path: Path) -> Path:
    return tmp_path / "likely.jsonl"


def _check(path: Path) -> lds_likely.Check:
    return replace(lds_likely.LIKELY, path=path, rows={"span": 2, "sentence": 2, "model": 1})


def _write(path: Path, lines: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")


def test_the_test_reads_the_first_priced_rows_in_order_and_not_before_they_are_all_in(
    rows: Path,
) -> None:
    screened = {"id": "s", "row": 0, "shape": "span", "likely": False, "seconds": 1}
    lines = [_line(5, "span", 0.9), _line(1, "span", 0.6), _line(9, "span", 0.0), screened]
    _write(rows, lines)
    check = _check(rows)
    assert [x["row"] for x in lds_likely._rows(check, lines, "span")] == [1, 5]  # 9: too late
    assert lds_likely._verdict(check, lines).startswith("Not read yet")
    section = lds_likely.check_section(check)
    assert "span 3 likely of 4" in section
    assert "0.6" not in section  # no figure before the test reads them all


def test_the_candidate_passes_only_with_the_gain_fixed_before_the_rows(rows: Path) -> None:

    def verdict(lines: list[dict[str, Any]]) -> str:
        return lds_likely._verdict(_check(rows), lines)

    short = [_line(i, s, 0.53) for i in range(2) for s in ("span", "sentence")]
    passing = [*short, _line(0, "model", 0.5)]
    assert verdict(passing).endswith("The candidate passes.")
    small = [_line(i, s, 0.51) for i in range(2) for s in ("span", "sentence")]
    assert "(a) +0.010: failed" in verdict([*small, _line(0, "model", 0.5)])
    worse_on_model = [*short, _line(0, "model", 0.45)]
    assert "(b) -0.050: failed" in verdict(worse_on_model)
    below_peer = [*short, _line(0, "model", 0.52, auto=0.6, peer=0.6)]
    assert "failed (model, LDS, Bernoulli ½; model, LDS, keep 1-4)" in verdict(below_peer)


def test_the_floor_check_prices_only_unlikely_short_answers_and_has_no_model_test(
    rows: Path,
) -> None:
    floor = replace(lds_likely.FLOOR, path=rows, rows={"span": 1, "sentence": 1})
    assert floor.budget == 32 and floor.candidate()._switches.unlikely_halves_min_calls == 32
    assert floor.priced("span", likely=False) and not floor.priced("span", likely=True)
    assert not floor.priced("model", likely=False)
    assert lds_likely.LIKELY.priced("model", likely=False)
    assert not lds_likely.LIKELY.priced("sentence", likely=False)
    lines = [_line(0, "span", 0.53), _line(1, "sentence", 0.53)]
    assert lds_likely._verdict(floor, lines) == (
        "(a) +0.030: passed; (c) and (d) passed. The candidate passes."
    )
    below = [_line(0, "span", 0.47, auto=0.5, peer=0.5), _line(1, "sentence", 0.6)]
    assert "(c) and (d) failed (span, LDS, Bernoulli ½; span, LDS, keep 1-4)" in (
        lds_likely._verdict(floor, below)
    )
