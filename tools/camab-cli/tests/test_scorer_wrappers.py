"""The tools' scorer wrappers (the audit's gate, micro-batcher and pool) pass the inner
scorer's capacity through to ``parallel_requests``."""

from __future__ import annotations

from test_auto_batch import ParallelScorer

from camab_cli.audit.batching import MicroBatcher
from camab_cli.audit.gate import GatedScorer, RateGate
from camab_cli.audit.scorers import PooledScorer
from camab_rag.scorers.base import parallel_requests


def test_wrappers_pass_the_inner_capacity_through() -> None:
    assert parallel_requests(GatedScorer(ParallelScorer(6), RateGate(limit=2))) == 6
    assert parallel_requests(MicroBatcher(ParallelScorer(7))) == 7
    # the smallest member's: a pool never over-asks its slowest server
    assert parallel_requests(PooledScorer([ParallelScorer(8), ParallelScorer(2)])) == 2
