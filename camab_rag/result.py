"""The attribution result and its stable JSON form."""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from camab_rag.errors import (
    AttributionCancelledError,
    AttributionPendingError,
    InputError,
    NoContextError,
)
from camab_rag.methods import Camab
from camab_rag.methods.registry import method_from_config
from camab_rag.posterior import GaussianLinearPosterior
from camab_rag.scorers.base import ScoredBy
from camab_rag.segments import Segment
from camab_rag.token_support import TokenSupport

if TYPE_CHECKING:
    from camab_rag.groundedness.filter import FilteredAnswer

FloatArray = NDArray[np.float64]
SCHEMA_VERSION = 1
TIE = 1e-12  # scores closer than this (relative) tie: see ranking()
_SCALARS = (  # noqa: SIM905
    "status error method method_config reward seed question response asked budget n_queries "
    "n_evaluations prompt_tokens wall_time_s n_redrawn exact "
    "scored_by n_documents prompt_mode prompt_note anchor_rewards uninformative token_support "
    "run_id groundedness"
).split()


@dataclass(frozen=True)
class StatementAttribution:
    """The attribution of one answer sentence (reward restricted to its tokens)."""

    text: str
    start: int
    end: int
    scores: FloatArray

    def top_k(self, k: int) -> list[int]:
        return _top_k(self.scores, k)

    def to_dict(self) -> dict[str, Any]:
        return {**fields_dict(self), "scores": [float(s) for s in self.scores]}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> StatementAttribution:
        return cls(**cast_fields(cls, data, {"scores": np.asarray(data["scores"], dtype=float)}))


@dataclass(frozen=True)
class Conflict:
    """Segment ``segment`` argues against the answer's word ``text`` (``start:end``), which
    segment ``backed_by`` supports (coefficients in nats per token)."""

    text: str
    start: int
    end: int
    segment: int
    backed_by: int
    against: float
    backing: float

    def to_dict(self) -> dict[str, Any]:
        return fields_dict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Conflict:
        return cls(**cast_fields(cls, data, {}))


_CAST: dict[str, Any] = {"int": int, "float": float, "str": str, "bool": bool}
_CAST["float | None"] = lambda v: None if v is None else float(v)


def fields_dict(obj: Any) -> dict[str, Any]:
    return {f.name: getattr(obj, f.name) for f in fields(obj)}


def cast_fields(cls: Any, data: Mapping[str, Any], done: dict[str, Any]) -> dict[str, Any]:
    """Dataclass ``cls``'s keyword arguments from JSON ``data``: ``done``, the rest cast."""
    kwargs = dict(done)
    for f in fields(cls):
        if f.name not in kwargs and f.name in data:
            kwargs[f.name] = _CAST.get(str(f.type), lambda v: v)(data[f.name])
    return kwargs


def short_text(text: str, limit: int = 60) -> str:
    """``text`` on one line, cut to ``limit`` characters with "..."."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3].rstrip() + "..."


@dataclass(frozen=True)
class AttributionResult:
    """Per-segment attribution of a response to its context: ``scores`` (one per segment,
    higher = relied on more), ``n_queries`` (distinct model calls), ``masks``/``rewards``
    (the subsets scored, in order), ``status`` ``"ok"``/``"error"``/``"no_context"`` (with
    ``error``), ``prompt_mode`` (``prompt_note``: why), ``anchor_rewards``/``token_support``
    (full and empty context), ``uninformative`` (why the scores tie), ``groundedness`` (a
    filter's verdict); in a chain, ``run_id`` and its ``documents`` (not in ``to_dict``)."""

    scores: FloatArray
    segments: list[Segment] = field(default_factory=list)
    method: str = "camab"
    budget: int = 0
    n_queries: int = 0
    n_evaluations: int = 0
    prompt_tokens: int = 0
    wall_time_s: float = 0.0
    masks: NDArray[np.bool_] = field(default_factory=lambda: np.zeros((0, 0), dtype=bool))
    rewards: FloatArray = field(default_factory=lambda: np.zeros(0))
    statements: list[StatementAttribution] = field(default_factory=list)
    conflicts: list[Conflict] = field(default_factory=list)
    question: str = ""
    response: str = ""
    asked: str = ""
    """In a chat, the question after the user's earlier one it follows up ("Is the pool open
    on Sundays? And on Mondays?"), as the gate and :func:`cite` read it; else empty."""
    reward: str = "mean_logprob"
    seed: int = 0
    method_config: dict[str, Any] = field(default_factory=dict)
    status: str = "ok"
    error: str | None = None
    n_documents: int = 0
    n_redrawn: int = 0
    exact: bool = False
    scored_by: ScoredBy | None = None
    prompt_mode: str = "template"
    prompt_note: str | None = None
    anchor_rewards: dict[str, float] = field(default_factory=dict)
    uninformative: str | None = None
    token_support: TokenSupport | None = None
    run_id: str | None = None
    groundedness: FilteredAnswer | None = None
    documents: tuple[Any, ...] = field(default=(), compare=False, repr=False)

    def __repr__(self) -> str:
        name = type(self).__name__
        if self.status != "ok":
            return f"{name}(status={self.status!r}, error={short_text(str(self.error))!r})"
        top = ", ".join(
            f"{i}: {float(self.scores[i]):+.3f}" for i in self.top_k(min(3, self.n_segments))
        )
        return (
            f"{name}({short_text(self.response)!r}, method={self.method!r}, "
            f"segments={self.n_segments}, n_queries={self.n_queries}, top={{{top}}})"
        )

    @property
    def n_segments(self) -> int:
        return int(self.scores.shape[0])

    @property
    def document_scores(self) -> FloatArray:
        n_docs = self.n_documents or (max((s.doc_index for s in self.segments), default=-1) + 1)
        totals = np.zeros(n_docs)
        for segment, score in zip(self.segments, self.scores):
            totals[segment.doc_index] += score
        return totals

    def top_k(self, k: int) -> list[int]:
        """Indices of the ``k`` highest-scoring segments, best first (ties: earlier first)."""
        return _top_k(self.scores, k)

    def top_documents(self, k: int) -> list[int]:
        """Indices of the ``k`` highest-scoring source documents, best first."""
        return _top_k(self.document_scores, k)

    def scored_documents(self) -> list[tuple[Any, float]]:
        """``(document, score)`` pairs of a chain's ``documents``, most relied-on first."""
        if self.status != "ok" or not self.documents:
            return []
        scores = self.document_scores
        order = self.top_documents(min(len(scores), len(self.documents)))
        return [(self.documents[i], float(scores[i])) for i in order]

    def reward_of(self, mask: Sequence[bool] | NDArray[np.bool_]) -> float | None:
        """The observed reward of a subset, if it was evaluated."""
        array = np.asarray(mask, dtype=bool)
        key = array.tobytes()
        for row, value in zip(self.masks, self.rewards):
            if row.tobytes() == key:
                return float(value)
        if array.size and array.all() and "full" in self.anchor_rewards:
            return self.anchor_rewards["full"]
        turns = self.token_support.earlier_turns if self.token_support is not None else 0
        if array.size and not array.any() and "empty" in self.anchor_rewards and not turns:
            return self.anchor_rewards["empty"]
        return None

    def posterior(self) -> GaussianLinearPosterior:
        """CAMAB's posterior over ``[intercept, w_1..w_N]``, whose mean is these scores, for
        its uncertainty (``correlation()``, ``sample()``): ``method="camab"`` runs only.
        ``auto`` reads its scores otherwise (LASSO, a flat intercept, two levels, a prior),
        so a CAMAB posterior on its rows would not describe them: a ``ValueError``."""
        method = method_from_config(self.method, self.method_config)
        if not isinstance(method, Camab):
            kind = (
                "its scores are not CAMAB's posterior mean; run method='camab' for one"
                if self.method == "auto"  # flat or two levels
                else "a hierarchical run"
                if self.method_config.get("hierarchical")
                else "it"
            )
            raise ValueError(f"method {self.method!r} has no single posterior ({kind})")
        return method.posterior_from(self.masks, self.rewards)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serialisable form; :meth:`from_dict` restores it exactly."""
        out: dict[str, Any] = {"schema_version": SCHEMA_VERSION}
        for name in _SCALARS:
            value = getattr(self, name)
            out[name] = value.to_dict() if hasattr(value, "to_dict") else value
            out[name] = dict(value) if isinstance(value, dict) else out[name]
        for name in ("run_id", "groundedness"):  # a chain's fields: absent, not null
            if out[name] is None:
                del out[name]
        return {
            **out,
            "segments": [s.to_dict() for s in self.segments],
            "scores": [float(s) for s in self.scores],
            "document_scores": [float(s) for s in self.document_scores],
            "top_k": self.top_k(min(5, self.n_segments)),
            "masks": ["".join("1" if b else "0" for b in row) for row in self.masks],
            "rewards": [float(r) for r in self.rewards],
            "statements": [s.to_dict() for s in self.statements],
            "conflicts": [c.to_dict() for c in self.conflicts],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> AttributionResult:
        """The result :meth:`to_dict` wrote (a pending or cancelled placeholder raises)."""
        check_finished(data)
        version = data.get("schema_version", SCHEMA_VERSION)
        if version != SCHEMA_VERSION:
            raise ValueError(f"unsupported attribution schema_version {version!r}")
        if "scores" not in data:
            raise InputError(
                "not an attribution result's dict (no 'scores'): a chain's "
                "output['attribution'] and a document's metadata['attribution'] are "
                "summaries; the whole result is the handler's or step's last_result (or "
                "results[run_id])"
            )
        try:
            return cls._read(data)
        except InputError:
            raise
        except (TypeError, ValueError, KeyError, AttributeError) as error:
            raise InputError(
                f"not a valid attribution result's dict: {type(error).__name__}: {error}"
            ) from error

    @classmethod
    def _read(cls, data: Mapping[str, Any]) -> AttributionResult:
        """:meth:`from_dict`'s reading of the fields, once the dict is known to be one."""
        scores = np.asarray(data["scores"], dtype=float)
        masks = [[c == "1" for c in row] for row in data.get("masks", [])]
        support, by = data.get("token_support"), data.get("scored_by")
        if (verdict := data.get("groundedness")) is not None:  # by name: the gate imports us
            gate = importlib.import_module("camab_rag.groundedness.filter")
            verdict = gate.FilteredAnswer.from_dict(verdict)
        done = {
            "scores": scores,
            "segments": [Segment.from_dict(s) for s in data.get("segments", [])],
            "masks": np.asarray(masks, dtype=bool).reshape(len(masks), scores.shape[0]),
            "rewards": np.asarray(data.get("rewards", []), dtype=float),
            "statements": [StatementAttribution.from_dict(s) for s in data.get("statements", [])],
            "conflicts": [Conflict.from_dict(c) for c in data.get("conflicts", [])],
            "method_config": dict(data.get("method_config", {})),
            "scored_by": ScoredBy.from_dict(by) if by else None,
            "anchor_rewards": {str(k): float(v) for k, v in data.get("anchor_rewards", {}).items()},
            "token_support": TokenSupport.from_dict(support) if support else None,
            "groundedness": verdict,
        }
        return cls(**cast_fields(cls, data, done))

    @classmethod
    def failed(cls, error: BaseException | str, **fields: Any) -> AttributionResult:
        """An empty result saying why attribution failed (``"no_context"`` or ``"error"``)."""
        message = error if isinstance(error, str) else f"{type(error).__name__}: {error}"
        status = "no_context" if isinstance(error, NoContextError) else "error"
        fields.setdefault("prompt_mode", "none")
        return cls(scores=np.zeros(0), status=status, error=message, **fields)


def uninformative_reason(
    budget: int, masks: NDArray[np.bool_], rewards: FloatArray, scores: FloatArray
) -> str | None:
    """Why ``scores`` cannot tell the segments apart (``result.uninformative``), or ``None``."""
    n = int(scores.shape[0])
    distinct = len({row.tobytes() for row in masks})
    if distinct == 0:
        return (
            "no subset of the context was scored (a baseline such as method='random' makes "
            "no model call): the scores say nothing about which segment the answer came from"
        )
    if distinct < 2:
        said = "every score is 0" if not np.any(scores) else "the scores are the answer's"
        return (
            f"budget {budget} scored {distinct} subset of the context: with nothing to "
            f"compare it with, {said}"
            + (" word overlap with each segment (no model call)" if np.any(scores) else "")
            + f" (a budget of at least {n + 1} measures each segment once)"
        )
    if rewards.size and float(np.ptp(rewards)) == 0.0:
        return (
            f"every one of the {distinct} subsets scored the same reward "
            f"({float(rewards[0]):.4g}): the answer's likelihood did not change with the "
            "context, so no segment can be told apart"
        )
    if n > 1 and float(np.ptp(scores)) <= TIE * max(1.0, float(np.abs(scores).max())):
        return f"all {n} segments got the same score ({float(scores[0]):.4g}): they tie"
    return None


def ranking(scores: Sequence[float] | FloatArray) -> list[int]:
    """Indices best first, scores compared on a grid of ``TIE`` times the largest (at
    least 1), so scores that differ by far less than that tie and keep index order. Why:
    solvers leave last-bit noise (1e-17) that differs between BLAS builds, and a citation
    or a top-k drop must not hang on it."""
    values = np.asarray(scores, dtype=float)
    finite = np.abs(values[np.isfinite(values)])
    unit = TIE * max(1.0, float(finite.max()) if finite.size else 1.0)
    return [int(i) for i in np.argsort(-np.round(values / unit), kind="stable")]


def _top_k(scores: FloatArray, k: int) -> list[int]:
    if k < 0:
        raise ValueError(f"k must be >= 0, got {k}")
    return ranking(scores)[:k]


def check_finished(data: object) -> None:
    """Raise the typed error of a ``"pending"`` or ``"cancelled"`` placeholder."""
    if not isinstance(data, Mapping):
        return
    if (status := data.get("status")) == "pending":
        raise AttributionPendingError(
            "the attribution has not finished yet (status 'pending'): wait for it first "
            "(handler.wait(run_id) / await handler.await_result(run_id) in LangChain, "
            "wait_for_attribution(response) / await await_attribution(response) in "
            "LlamaIndex), then read it"
        )
    if status == "cancelled":
        error = data.get("error") or "the attribution was cancelled before it finished"
        raise AttributionCancelledError(str(error))
