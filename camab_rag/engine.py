"""The public entry points: :func:`attribute`, :func:`aattribute` and :func:`attribute_fn`."""

from __future__ import annotations

import inspect
import logging
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from numpy.typing import NDArray

from camab_rag.conflicts import find_conflicts
from camab_rag.deadline import bounded, check_deadline
from camab_rag.errors import AttributionWarning, InputError
from camab_rag.groundedness.anchors import oracle_anchor_steps
from camab_rag.methods import (
    Auto,
    Hierarchical,
    Method,
    Sampler,
    enumerates,
    get_method,
    plan_sampler,
)
from camab_rag.oracle import FunctionOracle, ScorerOracle
from camab_rag.prompts import (
    DEFAULT_SYSTEM_PROMPT,
    DEFAULT_USER_TEMPLATE,
    PromptBuilder,
    PromptPlan,
    TemplatePromptBuilder,
    plan_prompt,
)
from camab_rag.result import AttributionResult, uninformative_reason
from camab_rag.rewards import RewardFn, get_reward
from camab_rag.rounds import Steps, adrive, drive, same_arguments_as
from camab_rag.scoring import Prompt, parallel_requests, scored_by
from camab_rag.segments import (
    Granularity,
    Segment,
    SourceDocument,
    check_encodable,
    segment_documents,
    to_documents,
)
from camab_rag.statements import attribute_statements

Masks = NDArray[np.bool_]
FloatArray = NDArray[np.float64]
ProgressFn = Callable[[int, int], object]
"""``progress(calls_made, total)``, called every few model calls (see :class:`_Run`)."""
MAX_SEGMENTS = 5000
ONE_DOCUMENT_WARNING = (
    "the context is one document, so attributing it by chunk can only say how much the "
    "whole context helped (status 'ok', one score). If it holds several documents "
    "formatted into one string, pass them as a list instead (in a LangChain chain: the "
    "retriever's Documents, before a format step joins them for the prompt); to find the "
    "sentences of one document, use granularity='sentence'"
)
logger = logging.getLogger(__name__)


@dataclass
class _Run:
    """One attribution run being assembled."""

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

    def record(self, masks: Masks, rewards: FloatArray) -> None:
        self.sampler.observe(masks, rewards)
        self.masks.append(masks)
        self.rewards.append(rewards)

    def follow(self, oracle: ScorerOracle | FunctionOracle, *, anchors: bool = False) -> None:
        """Report ``progress(calls, total)`` after each of ``oracle``'s calls (a few subsets
        each, :data:`~camab_rag.oracle.PROGRESS_EVERY`). ``total`` is the number of calls
        the run will make when its design is fixed (exact enumeration, leave-one-out,
        KernelSHAP, ContextCite: their distinct subsets, plus the full and empty contexts
        ``anchors`` asks for), else the budget (plus the anchors); it never falls below
        ``calls``, and the last report has ``calls == total``, so a bar neither stops short
        nor overflows."""
        if self.progress is None:
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

    def report(self, calls: int) -> None:
        """After a scorer call: ``calls`` made of ``total`` (raised if a run makes more)."""
        if self.progress is not None:
            self.total = max(self.total, calls)
            self._show(calls, self.total)

    def report_end(self, calls: int) -> None:
        """The run has made its last call: ``(calls, calls)``, unless that was the last
        report already (a run that stopped early, or whose anchors were cached)."""
        if self.progress is not None and calls and self._shown != (calls, calls):
            self.total = calls
            self._show(calls, calls)

    def _show(self, calls: int, total: int) -> None:
        self._shown = (calls, total)
        hook = self.progress
        try:
            if hook is not None:
                hook(calls, total)
        except Exception:  # a progress display must never stop the attribution
            logger.warning("camab: the progress callback raised", exc_info=True)

    def rounds(self, oracle: ScorerOracle | FunctionOracle) -> Steps[None]:
        """The attribution loop, written once for :func:`attribute`, :func:`aattribute`
        and :func:`attribute_fn`: the sampler proposes subsets, the oracle prices them (a
        few model calls at a time), the sampler learns, until it stops."""
        while (masks := self.sampler.next_masks()) is not None:
            if masks.shape[0]:
                rewards = yield from oracle.rewards(masks)
                self.record(masks, rewards)

    def history(self, n_segments: int) -> tuple[Masks, FloatArray]:
        if not self.masks:
            return np.zeros((0, n_segments), dtype=bool), np.zeros(0)
        return np.concatenate(self.masks), np.concatenate(self.rewards)


def _whole_number(value: object, name: str, minimum: int, unit: str = "") -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise InputError(f"{name} must be an integer, got {value!r}")
    if value < minimum:
        raise InputError(f"{name} must be >= {minimum}{unit}, got {value}")
    return int(value)


def check_budget(budget: object) -> int:
    """``budget`` as an ``int`` (at least 1), or an :class:`~camab_rag.errors.InputError`."""
    return _whole_number(budget, "budget", 1, " model call")


def check_seed(seed: object) -> int:
    """``seed`` as an ``int`` (at least 0), or an :class:`~camab_rag.errors.InputError`."""
    return _whole_number(seed, "seed", 0)


def _check_groups(groups: object, n_segments: int) -> list[int] | None:
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


def _dense(ids: list[int]) -> list[int]:
    """Document indices renumbered 0..D-1 in order (a document may own no segment)."""
    order = {doc: rank for rank, doc in enumerate(sorted(set(ids)))}
    return [order[doc] for doc in ids]


def _start(
    n_segments: int,
    budget: object,
    method: str | Method,
    seed: int,
    options: dict[str, Any],
    groups: list[int] | None = None,
    hierarchical: bool | None = None,
    parallel: int = 1,
) -> _Run:
    """The run of one attribution. ``parallel``: requests the scorer runs at once
    (:func:`~camab_rag.scoring.parallel_requests`), from which ``auto`` picks its Thompson
    draws per round when ``batch_size`` is not given (:meth:`Auto.for_scorer`)."""
    if n_segments > MAX_SEGMENTS:
        raise InputError(
            f"{n_segments} segments is more than {MAX_SEGMENTS}: use a coarser granularity "
            "(e.g. 'chunk') or fewer documents"
        )
    checked = check_budget(budget)
    seed = check_seed(seed)
    chosen = get_method(method, **options)
    if isinstance(chosen, Auto):
        chosen = chosen.for_scorer(parallel, checked)
    if chosen.name == "kernelshap" and checked < 2:
        raise InputError("kernelshap needs a budget of at least 2 (empty and full context)")
    if hierarchical and groups is None:
        raise InputError("hierarchical=True needs the segments' documents (groups=...)")
    if hierarchical is None:
        hierarchical = chosen.name == "auto"
    exact = enumerates(chosen, n_segments, checked)
    n_docs = max(groups) + 1 if groups else 1
    if hierarchical and groups is not None and not exact and 1 < n_docs < n_segments:
        chosen = Hierarchical(chosen, groups)
    elif isinstance(chosen, Auto):  # one level: a KernelSHAP opening (see methods.auto)
        chosen = replace(chosen, leave_one_out_first=False)
    rng = np.random.default_rng(seed)
    sampler = plan_sampler(chosen, n_segments, checked, rng)
    return _Run(chosen, sampler, checked, seed, time.perf_counter(), exact, [], [])


def _finish(
    run: _Run,
    n_segments: int,
    n_queries: int,
    prompt_tokens: int,
    **fields: Any,
) -> AttributionResult:
    masks, rewards = run.history(n_segments)
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
        prompt_tokens=prompt_tokens,
        masks=masks,
        rewards=rewards,
        stopped_early=run.sampler.stopped_early,
        n_redrawn=run.sampler.n_redrawn,
        exact=run.exact,
        seed=run.seed,
        method_config=run.method.config(),
        **fields,
    )


# ---------------------------------------------------------------------- text attribution
def _prepare(
    question: str,
    context: object,
    response: str,
    scorer: Any,
    granularity: Granularity,
    prompt_builder: PromptBuilder | Callable[..., PromptBuilder] | None,
    reward: str | RewardFn,
    user_template: str,
    system_prompt: str | None,
    prompt: Prompt | None,
) -> tuple[list[SourceDocument], list[Segment], ScorerOracle, str, PromptPlan]:
    if not isinstance(question, str):
        raise InputError(f"question must be a string, got {type(question).__name__}")
    if not isinstance(response, str) or not response.strip():
        raise InputError("the response is empty: there is nothing to attribute")
    check_encodable(question, "the question")
    check_encodable(response, "the response")
    if not callable(getattr(scorer, "score", None)):
        raise InputError(
            "scorer must have a score(requests) method, e.g. camab_rag.default_scorer() or "
            "camab_rag.OpenAICompletionsScorer(...)"
        )
    documents = to_documents(context)
    segments = segment_documents(documents, granularity)
    plan = PromptPlan("custom" if prompt_builder is not None else "template", None, None)
    if prompt is not None:
        if prompt_builder is not None:
            raise InputError("pass prompt= (the prompt the model received) or prompt_builder=")
        plan = plan_prompt([prompt], documents, granularity)
    if plan.builder is not None:
        builder: PromptBuilder = plan.builder
    elif prompt_builder is None:
        builder = TemplatePromptBuilder(
            question,
            documents,
            segments,
            user_template=user_template,
            system_prompt=system_prompt,
        )
    elif callable(prompt_builder) and not hasattr(prompt_builder, "build"):
        builder = prompt_builder(question, documents, segments)
    else:
        builder = prompt_builder  # type: ignore[assignment]
    if builder.n_segments != len(segments):
        raise InputError(
            f"the prompt builder covers {builder.n_segments} segments, the context has "
            f"{len(segments)}"
        )
    reward_name, reward_fn = get_reward(reward)
    oracle = ScorerOracle(builder, scorer, response, reward_fn)
    return documents, segments, oracle, reward_name, plan


@dataclass
class _TextJob:
    """One text attribution: its documents, segments, oracle and run, built once from the
    arguments of :func:`attribute` / :func:`aattribute` (the two differ only in how a
    batch is scored)."""

    arguments: dict[str, Any]
    documents: list[SourceDocument]
    segments: list[Segment]
    oracle: ScorerOracle
    reward_name: str
    plan: PromptPlan
    run: _Run

    @classmethod
    def start(cls, arguments: dict[str, Any]) -> _TextJob:
        a = arguments
        documents, segments, oracle, reward_name, plan = _prepare(
            a["question"],
            a["context"],
            a["response"],
            a["scorer"],
            a["granularity"],
            a["prompt_builder"],
            a["reward"],
            a["user_template"],
            a["system_prompt"],
            a["prompt"],
        )
        if a["granularity"] == "chunk" and len(documents) == 1:
            warnings.warn(ONE_DOCUMENT_WARNING, AttributionWarning, stacklevel=2)
        groups = _dense([segment.doc_index for segment in segments])
        run = _start(
            len(segments),
            a["budget"],
            a["method"],
            a["seed"],
            a["method_options"],
            groups,
            a["hierarchical"],
            parallel_requests(a["scorer"]),
        )
        run.progress = a["progress"]
        run.follow(oracle, anchors=bool(a["anchors"]))
        return cls(arguments, documents, segments, oracle, reward_name, plan, run)

    def steps(self) -> Steps[AttributionResult]:
        """The whole attribution as a generator of model calls: the loop, then (with
        ``anchors=True``) the full and empty contexts, then the result; under the
        ``deadline_s`` of the arguments (:func:`camab_rag.deadline.bounded`)."""
        return bounded(self._steps(), check_deadline(self.arguments["deadline_s"]))

    def _steps(self) -> Steps[AttributionResult]:
        yield from self.run.rounds(self.oracle)
        if not self.arguments["anchors"]:
            self.run.report_end(self.oracle.n_queries)
            return self.result()
        support, full, empty = yield from oracle_anchor_steps(self.oracle)
        self.run.report_end(self.oracle.n_queries)
        return replace(
            self.result(), anchor_rewards={"full": full, "empty": empty}, token_support=support
        )

    def result(self) -> AttributionResult:
        a, run, oracle = self.arguments, self.run, self.oracle
        result = _finish(
            run,
            len(self.segments),
            oracle.n_queries,
            oracle.prompt_tokens,
            segments=self.segments,
            question=a["question"],
            response=a["response"],
            reward=self.reward_name,
            n_documents=len(self.documents),
            scored_by=scored_by(a["scorer"]),
            prompt_mode=self.plan.mode,
            prompt_note=self.plan.note,
        )
        per_statement, conflicts = [], []
        if a["statements"]:
            per_statement = attribute_statements(run.method, oracle, result.masks, run.seed)
            texts = [segment.text for segment in self.segments]
            conflicts = find_conflicts(
                run.method, oracle, result.masks, result.scores, texts, run.seed
            )
        return replace(
            result,
            statements=per_statement,
            conflicts=conflicts,
            wall_time_s=time.perf_counter() - run.started,
        )


def attribute(
    question: str,
    context: object,
    response: str,
    scorer: Any,
    *,
    budget: int = 40,
    method: str | Method = "auto",
    granularity: Granularity = "sentence",
    seed: int = 0,
    reward: str | RewardFn = "mean_logprob",
    prompt_builder: PromptBuilder | Callable[..., PromptBuilder] | None = None,
    user_template: str = DEFAULT_USER_TEMPLATE,
    system_prompt: str | None = DEFAULT_SYSTEM_PROMPT,
    prompt: Prompt | None = None,
    anchors: bool = False,
    statements: bool = True,
    hierarchical: bool | None = None,
    progress: ProgressFn | None = None,
    deadline_s: float | None = None,
    **method_options: Any,
) -> AttributionResult:
    """Attribute ``response`` to the segments of ``context``.

    Args:
        question: the user's question.
        context: a string or a sequence of documents (strings, mappings with ``text`` or
            ``page_content``, LangChain ``Document``, LlamaIndex nodes).
        response: the answer to explain (scored as given, never regenerated).
        scorer: a :class:`~camab_rag.scoring.Scorer` (``camab_rag.default_scorer()``,
            ``camab_rag.OpenAICompletionsScorer(...)``, ...).
        budget: distinct model calls allowed: each call scores a different subset. When
            ``2**N <= budget`` every subset is scored once and the fit is exact (then the
            run makes ``2**N`` calls). Leave-one-out always makes ``N + 1``.
        method: ``"auto"`` (default: the best quality per call on our benchmark, see
            :mod:`camab_rag.methods.auto`), ``"camab"`` (the paper's Algorithm 1; pass
            ``redraw=False`` for its loop as written), ``"kernelshap"``,
            ``"contextcite"``, ``"loo"``, ``"random"``, or a
            :class:`~camab_rag.methods.Method` instance.
        granularity: ``"sentence"``, ``"chunk"`` or a splitter callable.
        seed: makes the run reproducible.
        reward: ``"mean_logprob"`` (the paper's Eq. 1), ``"sum_logprob"``, ``"logit"`` or a
            function of the token log-probabilities.
        prompt_builder: how a subset becomes a prompt (default: question + kept segments in
            ``user_template`` with ``system_prompt``); a builder or a factory
            ``(question, documents, segments) -> builder``.
        prompt: the prompt the model really received (text or chat messages), e.g.
            captured from a chain: the documents are found in it and cut out of it for
            each subset, so any template works unchanged; when a document's text is not
            in it verbatim the default template is used instead, and
            ``result.prompt_mode`` / ``result.prompt_note`` say so.
        anchors: also score the full and the empty context (at most two more model calls,
            counted in ``n_queries``, not used by the estimator), so a groundedness verdict
            reads the context gain from the result (``result.anchor_rewards``) and every
            answer token's log-prob under both (``result.token_support``). In a chat prompt
            the empty context also leaves out the earlier turns.
        statements: also attribute each answer sentence, and find the answer words a
            supporting source argues against (``result.conflicts``; no extra model calls).
        hierarchical: attribute whole documents first, then the segments inside the top
            documents (:mod:`camab_rag.methods.hierarchical`); ``None`` (default) lets
            ``"auto"`` do so and runs the other methods flat.
        progress: called as ``progress(calls_made, total)`` every few model calls (a
            progress bar, a log line): ``total`` is the number of calls the run will make
            when its design is fixed (``2**N`` for an exact fit, ``N + 1`` for
            leave-one-out), else the budget (plus the ``anchors``); the last call has
            ``calls_made == total``. An exception it raises is logged and ignored.
        deadline_s: the most seconds the attribution may take (``None``: no limit). The
            clock is checked before each batch of model calls (an in-process model
            finishes the batch it is running, so the worst case is the deadline plus one
            batch); an HTTP scorer's requests and retries are cut to it, and an async run
            is cancelled at it. Past it a
            :class:`~camab_rag.errors.DeadlineExceededError` is raised.
        **method_options: passed to the method, e.g. ``batch_size=4`` (Thompson samples per
            round, scored concurrently; ``"auto"`` takes it from the scorer's parallel
            capacity when not given: :func:`~camab_rag.methods.auto.auto_batch_size`),
            ``early_stop=EarlyStop()``, ``noise_variance``.
    """
    return drive(_TextJob.start(dict(locals())).steps())


@same_arguments_as(attribute)
def attribute_steps(
    question: str, context: object, response: str, scorer: Any, **options: Any
) -> Steps[AttributionResult]:
    """:func:`attribute` (same arguments, checked against its signature) as a generator of
    model calls (:mod:`camab_rag.rounds`), for callers that run their own loop."""
    bound = _ATTRIBUTE_SIGNATURE.bind(question, context, response, scorer, **options)
    bound.apply_defaults()
    return (yield from _TextJob.start(dict(bound.arguments)).steps())


@same_arguments_as(attribute)
async def aattribute(
    question: str, context: object, response: str, scorer: Any, **options: Any
) -> AttributionResult:
    """Async :func:`attribute`, with the same arguments: each batch of subsets is scored
    with ``scorer.ascore``."""
    return await adrive(attribute_steps(question, context, response, scorer, **options))


_ATTRIBUTE_SIGNATURE = inspect.signature(attribute)


# ---------------------------------------------------------------------- no LLM at all
def attribute_fn(
    value_fn: Callable[[NDArray[np.bool_]], float],
    n_segments: int,
    *,
    budget: int = 40,
    method: str | Method = "auto",
    seed: int = 0,
    groups: Sequence[int] | None = None,
    hierarchical: bool | None = None,
    progress: ProgressFn | None = None,
    **method_options: Any,
) -> AttributionResult:
    """Attribute a reward function over ``n_segments`` binary inclusions.

    ``value_fn`` maps a boolean mask of shape ``(n_segments,)`` to a float reward; each
    distinct mask is evaluated once, and ``budget`` counts those distinct calls.
    ``groups`` gives each segment's document index (0..D-1): with it, ``"auto"`` (or any
    method with ``hierarchical=True``) attributes the documents first, then the segments
    inside the top ones.
    """
    if isinstance(n_segments, bool) or not isinstance(n_segments, (int, np.integer)):
        raise InputError(f"n_segments must be an integer, got {n_segments!r}")
    if n_segments < 1:
        raise InputError("n_segments must be >= 1: there is nothing to attribute")
    if not callable(value_fn):
        raise InputError("value_fn must be callable: mask -> float")
    oracle = FunctionOracle(value_fn)
    run = _start(
        int(n_segments),
        budget,
        method,
        seed,
        method_options,
        _check_groups(groups, int(n_segments)),
        hierarchical,
    )
    run.progress = progress
    run.follow(oracle)
    drive(run.rounds(oracle))
    run.report_end(oracle.n_queries)
    result = _finish(run, int(n_segments), oracle.n_queries, 0)
    return replace(result, wall_time_s=time.perf_counter() - run.started)


__all__ = ["aattribute", "attribute", "attribute_fn", "attribute_steps"]
