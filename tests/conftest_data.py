"""Paths to the shared evaluation data (``../shared/data`` beside the repository)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

DATA_DIR = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def read_jsonl(name: str, limit: int | None = None) -> list[dict[str, Any]]:
    rows = []
    with (DATA_DIR / name).open(encoding="utf-8") as handle:
        for line in handle:
            rows.append(json.loads(line))
            if limit is not None and len(rows) >= limit:
                break
    return rows
