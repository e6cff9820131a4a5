"""Hand-written answers for the gate: short and reworded correct answers, and the same
answers with one invented detail, each over a one-document context.

Two disjoint lists, written for issue 48 by the gate engineer before any of them was
scored: ``BENCHMARK`` (the benchmark's short-answer set: its pass rate at the shipped
default is a target) and ``CALIBRATION`` (copied into the shipped calibration set,
``camab_rag/data/calibration.jsonl``, so never reported). Each case is ``(context,
question, correct answer, invented answer)``; a ``question`` that starts with ``And`` is a
follow-up ("And how long is its warranty?"), answered from the document alone. The cases
are stored as data in ``benchmarks/results/gate_written_cases.json``.
"""

from __future__ import annotations

import json
from pathlib import Path

Case = tuple[str, str, str, str]

CASES = Path(__file__).resolve().parent / "results" / "gate_written_cases.json"
_loaded: dict[str, list[list[str]]] = json.loads(CASES.read_text(encoding="utf-8"))

BENCHMARK: list[Case] = [(c[0], c[1], c[2], c[3]) for c in _loaded["BENCHMARK"]]
CALIBRATION: list[Case] = [(c[0], c[1], c[2], c[3]) for c in _loaded["CALIBRATION"]]
