"""The benchmarks' tests share the core suite's helpers (``tests/``: ``conftest_data``,
``shared_fixtures``, the fake scorers) and its session fixtures."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests"))

from shared_fixtures import smollm2_scorer as smollm2_scorer
