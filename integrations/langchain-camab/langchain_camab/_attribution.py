"""Run camab-rag on what a chain saw: ablate the real prompt when possible."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from camab_rag.engine import ProgressFn, aattribute, attribute
from camab_rag.groundedness import GroundednessFilter, check_groundedness_filter
from camab_rag.prompts import PromptBuilder, SpanRemovalPromptBuilder, locate_segments
from camab_rag.scoring import Prompt, prompt_texts
from camab_rag.segments import Granularity, SourceDocument, segment_documents, to_documents
from langchain_camab.result import ChainAttribution, PromptMode


@dataclass(frozen=True)
class Settings:
    """What every attribution of an integration object runs with."""

    budget: int = 40
    method: str = "auto"
    granularity: Granularity = "chunk"
    seed: int = 0
    options: tuple[tuple[str, Any], ...] = ()
    groundedness: GroundednessFilter | None = None
    """Judges each attributed answer (flag, or block with a fallback)."""


def check_filter(groundedness: object, *, can_block: bool, where: str) -> None:
    """Reject a filter the integration object cannot honour, naming the problem."""
    check_groundedness_filter(groundedness)
    if (
        isinstance(groundedness, GroundednessFilter)
        and groundedness.mode == "block"
        and not can_block
    ):
        raise ValueError(
            f"{where} cannot replace the chain's answer, so GroundednessFilter(mode='block') "
            "would not block anything: use mode='flag' here, or put "
            "CamabAttributor(groundedness=GroundednessFilter(mode='block')) after the chain"
        )


@dataclass(frozen=True)
class PromptPlan:
    """How subsets become prompts for one run."""

    mode: PromptMode
    builder: PromptBuilder | None
    note: str | None


def plan_prompt(
    prompt: Prompt | None, documents: Sequence[SourceDocument], granularity: Granularity
) -> PromptPlan:
    """Span removal on ``prompt`` when every document's text is in it, else the template."""
    if prompt is None:
        return PromptPlan("template", None, "no prompt was captured: used the default template")
    segments = segment_documents(documents, granularity)
    locations = locate_segments(prompt, documents, segments)
    if locations is not None:
        return PromptPlan("captured", SpanRemovalPromptBuilder(prompt, locations), None)
    texts = prompt_texts(prompt)
    missing = [
        i for i, doc in enumerate(documents) if doc.text and not any(doc.text in t for t in texts)
    ]
    which = ", ".join(str(i) for i in missing) if missing else "?"
    return PromptPlan(
        "template",
        None,
        f"the text of document(s) {which} was not found verbatim in the prompt the LLM "
        "received: used the default template",
    )


def _prepare(
    documents: object, prompt: Prompt | None, settings: Settings, progress: ProgressFn | None
) -> tuple[list[SourceDocument], PromptPlan, dict[str, Any]]:
    docs = to_documents(documents)
    plan = plan_prompt(prompt, docs, settings.granularity)
    kwargs: dict[str, Any] = {
        "budget": settings.budget,
        "method": settings.method,
        "granularity": settings.granularity,
        "seed": settings.seed,
        **dict(settings.options),
    }
    if plan.builder is not None:
        kwargs["prompt_builder"] = plan.builder
    if progress is not None:
        kwargs["progress"] = progress
    return docs, plan, kwargs


def _held(documents: object) -> tuple[Any, ...]:
    """The document objects the chain held, for ``ChainAttribution.documents``."""
    if isinstance(documents, (list, tuple)):
        return tuple(documents)
    return (documents,)


def run(
    question: str,
    documents: object,
    answer: str,
    scorer: Any,
    settings: Settings,
    *,
    prompt: Prompt | None = None,
    run_id: str | None = None,
    progress: ProgressFn | None = None,
) -> ChainAttribution:
    """Attribute ``answer`` to ``documents`` (raises on failure; callers catch)."""
    docs, plan, kwargs = _prepare(documents, prompt, settings, progress)
    result = attribute(question, docs, answer, scorer, **kwargs)
    chain = ChainAttribution.from_result(
        result,
        prompt_mode=plan.mode,
        prompt_note=plan.note,
        run_id=run_id,
        documents=_held(documents),
    )
    if settings.groundedness is None:
        return chain
    verdict = settings.groundedness.judge(
        result, scorer=scorer, context=docs, prompt_builder=plan.builder
    )
    return replace(chain, groundedness=verdict)


async def arun(
    question: str,
    documents: object,
    answer: str,
    scorer: Any,
    settings: Settings,
    *,
    prompt: Prompt | None = None,
    run_id: str | None = None,
    progress: ProgressFn | None = None,
) -> ChainAttribution:
    """Async :func:`run` (scores with ``scorer.ascore``)."""
    docs, plan, kwargs = _prepare(documents, prompt, settings, progress)
    result = await aattribute(question, docs, answer, scorer, **kwargs)
    chain = ChainAttribution.from_result(
        result,
        prompt_mode=plan.mode,
        prompt_note=plan.note,
        run_id=run_id,
        documents=_held(documents),
    )
    if settings.groundedness is None:
        return chain
    verdict = await settings.groundedness.ajudge(
        result, scorer=scorer, context=docs, prompt_builder=plan.builder
    )
    return replace(chain, groundedness=verdict)


def failed(
    error: BaseException | str,
    run_id: str | None = None,
    settings: Settings | None = None,
    **fields: Any,
) -> ChainAttribution:
    """A result recording why attribution failed. The chain's answer is untouched unless
    the settings' groundedness filter blocks unjudgeable answers (``on_error="block"``)."""
    result: ChainAttribution = ChainAttribution.failed(  # type: ignore[assignment]
        error, run_id=run_id, **fields
    )
    if settings is None or settings.groundedness is None:
        return result
    return replace(result, groundedness=settings.groundedness.judge(result))
