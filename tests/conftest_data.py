"""The data the tests read: the samples bundled in ``data/`` (see ``data/README.md``).

The full evaluation sets in ``../shared/data`` are for benchmarks only: a test must pass
on a clone that has nothing beside it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

DATA_DIR = Path(__file__).resolve().parents[1] / "data"
HOTPOTQA = DATA_DIR / "hotpotqa_dev_sample.jsonl"
TYDIQA = DATA_DIR / "tydiqa_goldp_dev_sample.jsonl"


def read_jsonl(path: Path, limit: int | None = None) -> list[dict[str, Any]]:
    rows = []
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            rows.append(json.loads(line))
            if limit is not None and len(rows) >= limit:
                break
    return rows
