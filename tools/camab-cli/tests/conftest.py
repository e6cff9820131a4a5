"""The CLI's suite shares the core suite's helpers (``tests/``: ``fakes``, ``planted``,
``conftest_data``, ``vllm_server``, ``shared_fixtures``), put on ``sys.path`` by this
package's pytest ``pythonpath`` setting (pyproject.toml), and its session fixtures."""

from __future__ import annotations

import signal

from shared_fixtures import smollm2_scorer as smollm2_scorer
from shared_fixtures import vllm_server as vllm_server

# Ctrl-C tests send a real SIGINT (to this process, or to a `camab serve` child): a shell
# that starts pytest as a background job leaves SIGINT ignored, which Python and any child
# inherit, and the signal would be lost. Tests stand for a user at a terminal.
signal.signal(signal.SIGINT, signal.default_int_handler)
