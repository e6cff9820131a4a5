"""A blind, hand-written test set for the groundedness gate (issue 48).

Who, when, how: written by hand on 2026-11-28 by one engineer session of the camab-rag
project (the ``writer`` worktree), in one sitting, without reading the gate's code, its
word rules, the earlier hand-written sets, their results or the calibration data, and
without running the gate or any model on these cases. No case was revised after any tool
judged it; others measure the set once. The cases are stored as data in
``benchmarks/results/gate_fresh_cases.json`` (they were Python literals here before).

What: :data:`FRESH` holds 60 one-document cases, 15 of each ``kind``:

* ``short`` -- a 1-5 word answer;
* ``paraphrase`` -- one sentence saying the document's fact in other words;
* ``followup`` -- a chat follow-up whose earlier turns are in ``history``;
* ``mixed`` -- a two-sentence answer joining two facts of the document, one reworded.

Each case is ``{"kind", "domain", "context", "question", "right", "invented", "history"}``:
``right`` is fully supported by ``context`` (some need one careful step of reasoning, such
as "weekends" covering Saturday); ``invented`` is the same answer with exactly one checkable
detail made wrong (a number, date, time, name, place, weekday or a flipped negation).
``domain`` is a label for counting only.

:data:`FRESH_MULTI` holds 10 cases whose ``contexts`` are 4-5 documents from one site:
``source`` is the index of the document supporting ``right``, ``stale`` the index of an
older page stating a different value (``None`` if there is none); ``invented`` may use the
stale value.

Names, places and organisations are invented. Licence: written for this project, CC0
(public domain dedication).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

CASES = Path(__file__).resolve().parent / "results" / "gate_fresh_cases.json"
_loaded: dict[str, list[dict[str, Any]]] = json.loads(CASES.read_text(encoding="utf-8"))

FRESH: list[dict[str, Any]] = _loaded["FRESH"]
FRESH_MULTI: list[dict[str, Any]] = _loaded["FRESH_MULTI"]
