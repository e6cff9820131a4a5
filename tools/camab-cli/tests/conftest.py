"""The CLI's suite shares the core suite's helpers (``tests/``: ``fakes``, ``planted``,
``conftest_data``, ``vllm_server``, ``shared_fixtures``), put on ``sys.path`` by this
package's pytest ``pythonpath`` setting (pyproject.toml), and its session fixtures."""

from __future__ import annotations

from shared_fixtures import smollm2_scorer as smollm2_scorer
from shared_fixtures import vllm_server as vllm_server
