"""The engine: an answer's attribution and verdict as model calls, and a reward function's."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from camab_rag.conflicts import find_conflicts
from camab_rag.deadline import bounded
from camab_rag.errors import ContextTooLongError, InputError, warn_caller
from camab_rag.groundedness.anchors import followed_up, oracle_anchor_steps
from camab_rag.lexical import lexical_scores
from camab_rag.methods import Method
from camab_rag.methods.prior import FREE_CALLS, FreePrior
from camab_rag.prompts import PromptBuilder, PromptPlan, TemplatePromptBuilder, plan_prompt
from camab_rag.result import AttributionResult
from camab_rag.rewards import FunctionOracle, ScorerOracle, get_reward
from camab_rag.runs import (
    ProgressFn,
    check_groups,
    check_planned_calls,
    finish_run,
    full_reward_steps,
    start_run,
    whole_number,
)
from camab_rag.scorers.base import ChatMessage, Prompt, parallel_requests, scored_by
from camab_rag.scorers.proxy import _checked_scorer
from camab_rag.segments import segment_documents, to_documents
from camab_rag.settings import AttributionSettings, resolve_settings
from camab_rag.statements import attribute_statements
from camab_rag.steps import Steps, drive
from camab_rag.text_gate import check_texts, check_value

if TYPE_CHECKING:
    from camab_rag.groundedness import GroundednessFilter

ONE_DOCUMENT_WARNING = (
    "the context is one document, so attributing it by chunk can only say how much the "
    "whole context helped (status 'ok', one score). If it holds several documents "
    "formatted into one string, pass them as a list instead (in a LangChain chain: the "
    "retriever's Documents, before a format step joins them for the prompt); to find the "
    "sentences of one document, use granularity='sentence'"
)

CustomBuilder = PromptBuilder | Callable[..., PromptBuilder]


def check_prior(prior: object, settings: AttributionSettings) -> None:
    """``prior``: ``None`` or a scorer (its calls cost nothing), with a method it steers."""
    name = settings.method_instance.name
    if _checked_scorer(prior, "prior") is not None and name not in ("auto", "camab", "prior"):
        raise InputError(
            f"prior= runs CAMAB with the free model's prior, so method={name!r} would be "
            "ignored: drop prior=, or leave method as 'auto'"
        )


def attribution_steps(
    question: str,
    context: object,
    response: str,
    scorer: Any,
    settings: AttributionSettings,
    *,
    groundedness: GroundednessFilter | None = None,
    prompts: Sequence[Prompt] | None = None,
    progress: ProgressFn | None = None,
    history: Sequence[ChatMessage] | None = None,
    prompt_builder: CustomBuilder | None = None,
    prior: Any = None,
) -> Steps[AttributionResult]:
    """One attribution as model calls: the free ``prior``'s run, the method's, the anchors,
    then the verdict (``budget=0``: it alone), within ``settings.deadline_s``."""
    if groundedness is not None:
        settings = settings.with_changes(anchors=True)  # the verdict reads them
    documents = to_documents(context)
    check_texts({"the question": question, "the response": response})
    if not str(response).strip():
        raise InputError("the response is empty: there is nothing to attribute")
    plan = PromptPlan("custom" if prompt_builder is not None else "template", None, None)
    if prompts is not None:
        if prompt_builder is not None:
            raise InputError("pass prompt= (the prompt the model received) or prompt_builder=")
        for i, given in enumerate(prompts):
            check_value(given, "the prompt" if len(prompts) == 1 else f"captured prompt {i}")
        plan = plan_prompt(list(prompts), documents, settings.granularity)
    segments = segment_documents(documents, settings.granularity)
    check_planned_calls(int(settings.budget), len(segments))
    about: dict[str, Any] = dict(  # what the result says of its inputs
        segments=segments,
        question=question,
        response=response,
        n_documents=len(documents),
        prompt_mode=plan.mode,
        prompt_note=plan.note,
    )
    builder: Any = plan.builder if plan.builder is not None else prompt_builder
    if builder is None:
        template: dict[str, Any] = dict(history=history, user_template=settings.user_template)
        template["system_prompt"] = settings.system_prompt
        builder = TemplatePromptBuilder(question, documents, segments, **template)
    elif history:
        raise InputError(
            "history= goes into the default prompt template: with prompt= or a "
            "prompt_builder, put the earlier chat messages in that prompt instead"
        )
    elif not hasattr(builder, "build"):  # a factory of builders
        builder = builder(question, documents, segments)
    turns = getattr(builder, "history", None)  # a follow-up reads the question before it
    asked = followed_up(question, turns, [d.text for d in documents])
    about["asked"] = asked if asked != question else ""
    if builder.n_segments != len(segments):
        raise InputError(
            f"the prompt builder covers {builder.n_segments} segments, the context has "
            f"{len(segments)}"
        )
    if settings.granularity == "chunk" and len(documents) == 1 and not settings.judge_only:
        warn_caller(ONE_DOCUMENT_WARNING)

    def attributed() -> Steps[AttributionResult]:
        oracle = ScorerOracle(builder, scorer, response, get_reward(settings.reward)[1])
        owners = [segment.doc_index for segment in segments]  # renumbered 0..D-1 in order
        groups = np.unique(owners, return_inverse=True)[1].tolist()
        chosen = settings
        if prior is not None:  # the free model attributes first: the target's run starts there
            free_settings = replace(chosen, method="auto", budget=FREE_CALLS, hierarchical=None)
            free_oracle = ScorerOracle(builder, prior, response, oracle.reward_fn)
            free_run = start_run(len(segments), free_settings, groups, parallel_requests(prior))
            yield from free_run.rounds(free_oracle)
            masks, rewards = free_run.history(len(segments))
            free = FreePrior(
                free_weights=free_run.method.fit(masks, rewards, free_run.seed),
                free_calls=free_oracle.n_queries,
                free_model=scored_by(prior).model,
            )
            chosen = replace(chosen, method=free, hierarchical=False)
        lexical = lexical_scores([segment.text for segment in segments], response)
        words = len(response.split())
        full = yield from full_reward_steps(oracle, len(segments), chosen, groups)
        parallel = parallel_requests(scorer)
        run = start_run(len(segments), chosen, groups, parallel, lexical, words, full)
        run.follow(oracle, progress, chosen.anchors)
        yield from run.rounds(oracle)
        extra: dict[str, Any] = {"reward": get_reward(chosen.reward)[0]}
        if chosen.anchors:
            support, full, empty = yield from oracle_anchor_steps(oracle)
            extra.update(anchor_rewards={"full": full, "empty": empty}, token_support=support)
        run.report(oracle.n_queries, last=True)
        result = finish_run(run, len(segments), oracle.n_queries, oracle.prompt_tokens, **about)
        if chosen.statements:
            texts = [segment.text for segment in segments]
            extra["statements"] = attribute_statements(run.method, oracle, result.masks, run.seed)
            extra["conflicts"] = find_conflicts(run.method, oracle, result.masks, texts, run.seed)
        return replace(result, wall_time_s=time.perf_counter() - run.started, **extra)

    def judged() -> Steps[AttributionResult]:
        if settings.judge_only and groundedness is not None:  # in a chain: the verdict alone
            verdict = yield from groundedness.answer_steps(
                question, documents, response, scorer, prompt_builder=plan.builder
            )
            report, anchors = verdict.report, dict[str, Any]()
            if report is not None and report.token_support is not None:
                full, empty = report.full_reward or 0.0, report.empty_reward or 0.0
                anchors = {"anchor_rewards": {"full": full, "empty": empty}}
                anchors["token_support"] = report.token_support
            result = AttributionResult(
                scores=np.zeros(len(segments)),
                method="none",
                n_queries=2 if report is not None else 0,
                uninformative="budget 0: nothing was attributed, only the groundedness verdict",
                status="ok" if verdict.error is None else "error",
                error=verdict.error,
                groundedness=verdict,
                **anchors,
                **about,
            )
        else:
            result = yield from attributed()
        result = replace(result, scored_by=scored_by(scorer))  # a proxy may have taken over
        if groundedness is None or settings.judge_only:
            return result
        verdict = yield from groundedness.judge_steps(
            result, scorer=scorer, context=documents, prompt_builder=builder
        )
        return replace(result, groundedness=verdict)

    try:
        return (yield from bounded(judged(), settings.deadline_s))
    except ContextTooLongError as error:
        if not documents:
            raise
        longest = max(range(len(documents)), key=lambda i: len(documents[i].text))
        size = len(documents[longest].text)
        raise ContextTooLongError(
            f"{error}: the longest document is context[{longest}] ({size:,} characters); "
            "split long documents into chunks (a text splitter) or pass fewer"
        ) from error


def attribute_fn(
    value_fn: Callable[[NDArray[np.bool_]], float],
    n_segments: int,
    *,
    budget: int | None = None,
    method: str | Method | None = None,
    groups: Sequence[int] | None = None,
    progress: ProgressFn | None = None,
    settings: AttributionSettings | None = None,
) -> AttributionResult:
    """Attribute ``value_fn`` (a boolean mask of shape ``(n_segments,)`` -> a float reward;
    each distinct mask evaluated once, ``budget`` of them). ``groups``: each segment's
    document index, for a hierarchical run; ``budget``/``method`` override ``settings``.
    ``auto`` over several documents may read the full context's value first, as a mean
    log-prob a token (:func:`~camab_rag.runs.full_reward_steps`)."""
    n = whole_number(n_segments, "n_segments", 1)
    if not callable(value_fn):
        raise InputError("value_fn must be callable: mask -> float")
    chosen = resolve_settings(settings, budget=budget, method=method)
    oracle = FunctionOracle(value_fn)
    owners = check_groups(groups, n)
    full = drive(full_reward_steps(oracle, n, chosen, owners))
    run = start_run(n, chosen, owners, full_reward=full)
    run.follow(oracle, progress, False)
    drive(run.rounds(oracle))
    run.report(oracle.n_queries, last=True)
    return finish_run(run, n, oracle.n_queries, 0)
