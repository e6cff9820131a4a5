"""One attribution run: its method and sampler, the subsets it scored, its progress, its result."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from camab_rag.errors import InputError
from camab_rag.methods import Auto, Hierarchical, Method
from camab_rag.methods.base import Sampler, enumerates, plan_sampler
from camab_rag.methods.hierarchical import most_calls
from camab_rag.result import AttributionResult, uninformative_reason
from camab_rag.rewards import FunctionOracle, ScorerOracle
from camab_rag.steps import Steps

if TYPE_CHECKING:
    from camab_rag.settings import AttributionSettings

Masks = NDArray[np.bool_]
FloatArray = NDArray[np.float64]
ProgressFn = Callable[[int, int], object]
MAX_SEGMENTS = 5000
MAX_CALLS = 4096  # the most model calls one text attribution may plan
logger = logging.getLogger(__name__)
JUDGE_ONLY = (
    "budget must be >= 1 model call (budget=0 attributes nothing and only judges "
    "groundedness, which the LangChain and LlamaIndex integrations do when given "
    "groundedness=GroundednessFilter(...); outside them, camab_rag.assess_answer(...) "
    "judges an answer with two calls)"
)


@dataclass
class Run:
    method: Method
    sampler: Sampler
    budget: int
    seed: int
    started: float
    exact: bool
    masks: list[Masks]
    rewards: list[FloatArray]
    progress: ProgressFn | None = None
    total: int = 0
    _shown: tuple[int, int] = (0, 0)

    def follow(
        self, oracle: ScorerOracle | FunctionOracle, progress: ProgressFn | None, anchors: bool
    ) -> None:
        """``progress(calls, total)`` after each of ``oracle``'s calls; the last is ``(n, n)``."""
        self.progress = progress
        if progress is None:
            return
        planned = self.sampler.planned()
        if planned is None:
            self.total = self.budget + (2 if anchors else 0)
        else:
            rows = {row.tobytes() for row in planned}
            if anchors:
                n = planned.shape[1]
                rows |= {np.ones(n, dtype=bool).tobytes(), np.zeros(n, dtype=bool).tobytes()}
            self.total = len(rows)
        oracle.on_scored = self.report

    def report(self, calls: int, last: bool = False) -> None:
        if self.progress is None or (last and (not calls or self._shown == (calls, calls))):
            return
        self.total = calls if last else max(self.total, calls)
        self._shown = (calls, self.total)
        try:
            self.progress(calls, self.total)
        except Exception:  # a progress display must never stop the attribution
            logger.warning("camab: the progress callback raised", exc_info=True)

    def rounds(self, oracle: ScorerOracle | FunctionOracle) -> Steps[None]:
        while (masks := self.sampler.next_masks()) is not None:
            if masks.shape[0]:
                rewards = yield from oracle.rewards(masks)
                self.sampler.observe(masks, rewards)
                self.masks.append(masks)
                self.rewards.append(rewards)

    def history(self, n_segments: int) -> tuple[Masks, FloatArray]:
        if not self.masks:
            return np.zeros((0, n_segments), dtype=bool), np.zeros(0)
        return np.concatenate(self.masks), np.concatenate(self.rewards)


def whole_number(value: object, name: str, minimum: int, unit: str = "") -> int:
    """``value`` as an ``int`` (at least ``minimum``), or an InputError naming it."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise InputError(f"{name} must be an integer, got {value!r}")
    if value < minimum:
        raise InputError(f"{name} must be >= {minimum}{unit}, got {value}")
    return int(value)


def check_planned_calls(budget: int, n_segments: int) -> None:
    """Refuse a ``budget`` that would make more than :data:`MAX_CALLS` calls."""
    planned = budget if n_segments >= 63 else min(budget, 2**n_segments)
    if planned > MAX_CALLS:
        noun = "segment" if n_segments == 1 else "segments"
        raise InputError(
            f"budget={budget} would make {planned} model calls for this context of "
            f"{n_segments} {noun}; one attribution makes at most {MAX_CALLS}: pass a "
            "smaller budget (the default is 40) or a coarser granularity ('chunk')"
        )


def check_groups(groups: object, n_segments: int) -> list[int] | None:
    if groups is None:
        return None
    try:
        ids = [int(g) for g in groups]  # type: ignore[attr-defined]
    except (TypeError, ValueError):
        raise InputError(f"groups must be a sequence of document indices, got {groups!r}") from None
    if len(ids) != n_segments:
        raise InputError(f"groups has {len(ids)} entries for {n_segments} segments")
    if ids and (min(ids) < 0 or set(ids) != set(range(max(ids) + 1))):
        raise InputError("groups must number the documents 0..D-1, each at least once")
    return ids


def full_reward_steps(
    oracle: ScorerOracle | FunctionOracle,
    n_segments: int,
    settings: AttributionSettings,
    groups: list[int] | None = None,
) -> Steps[float | None]:
    """The full context's reward, scored before the run, when ``auto``'s rule reads it
    (:meth:`Auto.reads_full_reward`, the default reward); the run's design reuses the
    call. Else ``None``, with no call."""
    n_docs = max(groups) + 1 if groups else 1
    method = settings.method_instance
    if (
        not isinstance(method, Auto)
        or settings.reward != "mean_logprob"
        or settings.judge_only
        or n_segments > MAX_SEGMENTS
        or not method.reads_full_reward(n_segments, int(settings.budget), n_docs)
    ):
        return None
    rewards = yield from oracle.rewards(np.ones((1, n_segments), dtype=bool))
    return float(rewards[0])


def start_run(
    n_segments: int,
    settings: AttributionSettings,
    groups: list[int] | None = None,
    parallel: int = 1,
    lexical: Sequence[float] | NDArray[np.float64] | None = None,
    answer_words: int | None = None,
    full_reward: float | None = None,
) -> Run:
    """The run of ``settings``' method for this context: ``auto`` fits its draws to
    ``parallel`` requests, ``groups``, the ``lexical`` scores of ``answer_words`` words
    and the ``full_reward`` (:func:`full_reward_steps`)."""
    if n_segments > MAX_SEGMENTS:
        raise InputError(
            f"{n_segments} segments is more than {MAX_SEGMENTS}: use a coarser granularity "
            "(e.g. 'chunk') or fewer documents"
        )
    if settings.judge_only:
        raise InputError(JUDGE_ONLY)
    budget = int(settings.budget)
    chosen = settings.method_instance
    n_docs = max(groups) + 1 if groups else 1
    if isinstance(chosen, Auto):
        chosen = chosen.for_scorer(parallel, budget).with_lexical(lexical, answer_words)
        chosen = chosen.with_full_reward(full_reward)
        chosen = chosen.for_budget(n_segments, budget, n_docs)
    if chosen.name == "kernelshap" and budget < 2:
        raise InputError("kernelshap needs a budget of at least 2 (empty and full context)")
    hierarchical = settings.hierarchical
    if hierarchical and groups is None:
        raise InputError("hierarchical=True needs the segments' documents (groups=...)")
    if hierarchical is None:
        hierarchical = chosen.name == "auto"
    exact = enumerates(chosen, n_segments, budget)
    one_level = isinstance(chosen, Auto) and chosen.fixed_design
    if (
        hierarchical
        and groups is not None
        and not exact
        and 1 < n_docs < n_segments
        and not one_level
        and not (isinstance(chosen, Auto) and most_calls(chosen, groups, budget) < budget)
    ):
        chosen = Hierarchical(chosen, groups)
    elif isinstance(chosen, Auto):  # one level: a KernelSHAP opening (see methods.auto)
        chosen = chosen.one_level(documents=groups is not None and n_docs == n_segments)
    sampler = plan_sampler(chosen, n_segments, budget, np.random.default_rng(settings.seed))
    return Run(chosen, sampler, budget, int(settings.seed), time.perf_counter(), exact, [], [])


def finish_run(run: Run, n: int, n_queries: int, tokens: int, **fields: Any) -> AttributionResult:
    masks, rewards = run.history(n)
    scores = run.method.fit(masks, rewards, run.seed)
    uninformative = uninformative_reason(run.budget, masks, rewards, scores)
    if uninformative is not None:
        logger.warning("camab: %s", uninformative)
    return AttributionResult(
        scores=scores,
        uninformative=uninformative,
        method=run.method.name,
        budget=run.budget,
        n_queries=n_queries,
        n_evaluations=int(masks.shape[0]),
        prompt_tokens=tokens,
        masks=masks,
        rewards=rewards,
        n_redrawn=run.sampler.n_redrawn,
        exact=run.exact,
        seed=run.seed,
        method_config=run.method.config() | budget_left(run, n, int(masks.shape[0])),
        wall_time_s=time.perf_counter() - run.started,
        **fields,
    )


def budget_left(run: Run, n_segments: int, evaluations: int) -> dict[str, Any]:
    left = run.budget - evaluations
    if left <= 0:
        return {}
    if run.exact:
        why = f"every subset of the {n_segments} units was scored (2**{n_segments} calls)"
    elif isinstance(run.method, Hierarchical):
        why = "the hierarchical plan (documents, then the top documents' units) had no more"
    else:
        why = f"method {run.method.name!r} asks for no more subsets here"
    return {"budget_left": {"calls": left, "why": why}}
