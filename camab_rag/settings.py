"""The one settings object: how an answer is attributed, built and validated once."""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from camab_rag.deadline import check_deadline
from camab_rag.engine import attribute, check_budget, check_seed
from camab_rag.errors import InputError
from camab_rag.groundedness import GroundednessFilter, check_groundedness_filter
from camab_rag.methods import get_method
from camab_rag.segments import Granularity

_ATTRIBUTE_KEYWORDS = frozenset(inspect.signature(attribute).parameters) - {"method_options"}
DEFAULT_DEADLINE_S = 120.0
"""The integrations' default attribution deadline, in seconds: well above what a long
answer normally costs on a CPU vLLM server, so it stops only an attribution that is stuck
(a hung or trickling server, an overloaded model)."""


@dataclass(frozen=True)
class AttributionSettings:
    """How every answer of an integration object is attributed, validated once.

    Attributes:
        budget: distinct model calls per answer; ``0`` attributes nothing and only judges
            groundedness (needs ``groundedness``: two model calls per answer, the result
            has ``method="none"`` and zero scores).
        method: ``"auto"`` (default), ``"camab"``, ``"kernelshap"``, ``"contextcite"``,
            ``"loo"``, ``"random"`` or a :class:`~camab_rag.methods.Method`.
        granularity: ``"chunk"`` (whole documents, the integrations' default),
            ``"sentence"`` or a splitter.
        seed: makes runs reproducible.
        options: method options, e.g. ``{"batch_size": 4}`` (without it, ``"auto"`` scores
            as many Thompson draws per round as the scorer runs at once, up to 2:
            :func:`~camab_rag.methods.auto.auto_batch_size`).
        groundedness: judges each attributed answer (flag, or block with a fallback).
        deadline_s: the most seconds one answer's attribution may take, verdict included
            (default :data:`DEFAULT_DEADLINE_S`; ``None``: no limit). Past it the
            attribution ends with an error and the chain's answer is untouched; worst
            case: the deadline, plus one batch when the model runs in process (a batch is
            not interrupted). Also accepted in ``options`` (where the integrations'
            ``**options`` put it).
    """

    budget: int = 40
    method: Any = "auto"
    granularity: Granularity = "chunk"
    seed: int = 0
    options: Mapping[str, Any] = field(default_factory=dict)
    groundedness: GroundednessFilter | None = None
    deadline_s: float | None = DEFAULT_DEADLINE_S

    def __post_init__(self) -> None:
        if isinstance(self.options, Mapping) and "deadline_s" in self.options:
            # the integrations pass their **options here: the field holds the one value
            options = dict(self.options)
            object.__setattr__(self, "deadline_s", options.pop("deadline_s"))
            object.__setattr__(self, "options", options)
        check_deadline(self.deadline_s)
        check_groundedness_filter(self.groundedness)
        if not self.judge_only:
            check_budget(self.budget)
        elif self.groundedness is None:
            raise InputError(
                "budget must be >= 1 model call (budget=0 attributes nothing and only judges "
                "groundedness: pass groundedness=GroundednessFilter(...) too)"
            )
        if not isinstance(self.method, str) and not hasattr(self.method, "sampler"):
            raise InputError(f"method must be a method name such as 'camab', got {self.method!r}")
        if not callable(self.granularity) and self.granularity not in ("chunk", "sentence"):
            raise InputError(
                f"granularity must be 'chunk', 'sentence' or a splitter, got {self.granularity!r}"
            )
        if not isinstance(self.options, Mapping):
            raise InputError(f"options must be a mapping, got {type(self.options).__name__}")
        check_seed(self.seed)
        # a misspelled method or method option fails here, not on every later answer
        get_method(
            self.method, **{k: v for k, v in self.options.items() if k not in _ATTRIBUTE_KEYWORDS}
        )

    @property
    def judge_only(self) -> bool:
        """``budget=0``: no attribution, only the groundedness verdict."""
        return (
            isinstance(self.budget, (int, np.integer))
            and not isinstance(self.budget, bool)
            and int(self.budget) == 0
        )

    def kwargs(self) -> dict[str, Any]:
        """The keyword arguments of :func:`camab_rag.attribute` these settings stand for."""
        return {
            "budget": self.budget,
            "method": self.method,
            "granularity": self.granularity,
            "seed": self.seed,
            "deadline_s": self.deadline_s,
            **self.options,
        }


__all__ = ["DEFAULT_DEADLINE_S", "AttributionSettings"]
