"""Batch audit of logged RAG answers (``camab audit``).

Each logged record (question, retrieved documents, answer) is attributed; the output gets
one line per record (attribution, per-sentence citations, groundedness verdict, cost) and
a summary (shares of answers unsupported and uncertain, documents never cited, cost). Runs
on one machine (asyncio, many records in flight) or on Ray Data (``engine="ray"``).

Example::

    from camab_cli.audit import AuditConfig, ScorerSpec, audit

    summary = audit("logs.jsonl", "audit.jsonl", spec=ScorerSpec(kind="model"),
                    config=AuditConfig(budget=40))
"""

from __future__ import annotations

from camab_cli.audit.config import AuditConfig
from camab_cli.audit.gate import GatedScorer, RateGate
from camab_cli.audit.run import audit, summary_path_for
from camab_cli.audit.scorers import PooledScorer, ScorerSpec
from camab_cli.audit.summary import cost_report

__all__ = [
    "AuditConfig",
    "GatedScorer",
    "PooledScorer",
    "RateGate",
    "ScorerSpec",
    "audit",
    "cost_report",
    "summary_path_for",
]
