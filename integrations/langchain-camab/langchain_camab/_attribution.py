"""Run camab-rag on what a chain saw (:mod:`camab_rag.captured` does the work)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from camab_rag import AttributionSettings
from camab_rag.captured import captured_steps
from camab_rag.engine import ProgressFn
from camab_rag.groundedness import check_groundedness_filter
from camab_rag.rounds import Steps
from camab_rag.scoring import Prompt
from langchain_camab.result import ChainAttribution


def check_filter(groundedness: object, *, can_block: bool, where: str) -> None:
    """Reject a filter the integration object cannot honour, naming the problem."""
    check_groundedness_filter(
        groundedness,
        blocking_refused=None
        if can_block
        else (
            f"{where} cannot replace the chain's answer, so it would not block anything: use "
            "mode='flag' here, or put CamabAttributor(groundedness=GroundednessFilter("
            "mode='block')) after the chain"
        ),
    )


def _held(documents: object) -> tuple[Any, ...]:
    """The document objects the chain held, for ``ChainAttribution.documents``."""
    if isinstance(documents, (list, tuple)):
        return tuple(documents)
    return (documents,)


def run_steps(
    question: str,
    documents: object,
    answer: str,
    scorer: Any,
    settings: AttributionSettings,
    *,
    prompt: Prompt | None = None,
    run_id: str | None = None,
    progress: ProgressFn | None = None,
) -> Steps[ChainAttribution]:
    """Attribute ``answer`` to ``documents`` in the prompt the chain's model received, and
    judge it with the settings' filter (raises on failure; callers catch). A generator of
    model calls, driven by the handlers and the step (``drive`` / ``adrive``)."""
    captured = yield from captured_steps(
        question,
        documents,
        answer,
        scorer,
        settings,
        prompts=[prompt] if prompt is not None else [],
        progress=progress,
    )
    return ChainAttribution.from_result(
        captured.result, run_id=run_id, documents=_held(documents), groundedness=captured.verdict
    )


def failed(
    error: BaseException | str,
    run_id: str | None = None,
    settings: AttributionSettings | None = None,
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
