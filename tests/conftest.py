"""Shared pytest fixtures: defined in ``shared_fixtures`` (the tools' suites import them
from there too)."""

from __future__ import annotations

from shared_fixtures import smollm2_scorer as smollm2_scorer
from shared_fixtures import vllm_server as vllm_server
