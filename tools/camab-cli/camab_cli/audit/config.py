"""What an audit runs: attribution settings and the citation/groundedness rules."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from camab_cli.options import METHODS
from camab_rag.deadline import check_deadline
from camab_rag.errors import InputError
from camab_rag.groundedness.report import DEFAULT_BLOCK_ON
from camab_rag.runs import whole_number

AUDIT_DEADLINE_S = 300.0
"""The audit's default per-record deadline, in seconds (``deadline_s``, ``--deadline-s``):
well above what a record of a few sentences costs, even with four records sharing an
in-process model on a CPU, so it stops only a record that would hold the batch for many
minutes (a 5,000-word answer scored in-process, a stuck server); that record becomes an
error line and the run goes on."""


@dataclass(frozen=True)
class AuditConfig:
    """Settings shared by every record of an audit (and every Ray actor).

    Attributes:
        budget: evaluations per record (``s``).
        deadline_s: the most seconds one record may take, attribution and verdict
            (default :data:`AUDIT_DEADLINE_S`; ``None``: no limit); past it the record is
            an error line (``DeadlineExceededError``) and the audit goes on.
        method, granularity, seed, reward: passed to :func:`camab_rag.aattribute`; every
            record uses the same ``seed``, so a record's result does not depend on the
            order or the machine it ran on.
        top_k: raw top segments listed per answer sentence, with their scores (the
            citations themselves are what :func:`camab_rag.citations.cite` cites).
        min_citation_score: a raw segment is listed only if its score is above this.
        ungrounded_threshold: ``None`` (default): the library's calibrated verdict
            (``supported``, ``uncertain``, ``unsupported``, as ``assess_answer`` gives);
            a number: an answer whose groundedness score (the share of its surprisal the
            context explains) is below it is ``unsupported``, as ``threshold=`` does in
            the library.
        block_on: ``"facts"`` (default) or ``"any"``: as ``GroundednessFilter(block_on=)``;
            ``"facts"``: an answer is ``unsupported`` only when it also leaves a number,
            date or name unchecked (else ``uncertain``); ``"any"``: the stricter calibrated
            verdict as it stands.
        measure_gain: judge each answer with two extra queries (the full and the empty
            context), as ``assess_answer`` does; ``False`` spends none and reads the
            linear surrogate's prediction (two verdicts, the score's default threshold).
        method_options: extra method options, e.g. ``{"batch_size": 4}`` (CAMAB's
            Thompson samples per round, scored as one batch).
    """

    budget: int = 40
    method: str = "auto"
    granularity: str = "sentence"
    deadline_s: float | None = AUDIT_DEADLINE_S
    seed: int = 0
    reward: str = "mean_logprob"
    top_k: int = 3
    min_citation_score: float = 0.0
    ungrounded_threshold: float | None = None
    block_on: str = DEFAULT_BLOCK_ON
    measure_gain: bool = True
    method_options: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if isinstance(self.budget, bool) or not isinstance(self.budget, int) or self.budget < 1:
            raise InputError(f"budget must be a positive integer, got {self.budget!r}")
        if self.method not in METHODS:
            raise InputError(f"method must be one of {', '.join(METHODS)}, got {self.method!r}")
        if self.granularity not in ("sentence", "chunk"):
            raise InputError(f"granularity must be 'sentence' or 'chunk', got {self.granularity!r}")
        whole_number(self.seed, "seed", 0)  # before any record: a bad seed would fail every one
        check_deadline(self.deadline_s)
        if self.top_k < 1:
            raise InputError(f"top_k must be at least 1, got {self.top_k}")
        if self.block_on not in ("any", "facts"):
            raise InputError(f"block_on must be 'any' or 'facts', got {self.block_on!r}")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
