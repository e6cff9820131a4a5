"""Which documents an answer came from (:func:`answer_documents`), what it then carries, and
waiting for a stream's attribution (:func:`wait_for_attribution`)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from camab_rag.errors import AttributionPendingError, InputError, NoContextError
from camab_rag.integration import METADATA_KEY, Attachment, prompt_holds

if TYPE_CHECKING:
    from camab_rag.integration import Prompt

logger = logging.getLogger(__name__)
ANSWER_JOB = "_camab_attribution_job"
"""The attribute of a streamed answer holding its background attribution's handle."""
NOT_YET = (
    "this response has no attribution yet: a streamed answer is attributed once its stream "
    "has been read to the end"
)


def set_attribution(answer: object, value: dict[str, Any]) -> None:
    """Set ``answer.metadata["attribution"]`` (creating the dict if needed)."""
    if not isinstance(getattr(answer, "metadata", None), dict):
        answer.metadata = {}  # type: ignore[attr-defined]
    answer.metadata[METADATA_KEY] = value  # type: ignore[attr-defined]


def _info(response: object) -> dict[str, Any]:
    metadata = getattr(response, "metadata", None)
    info = metadata.get(METADATA_KEY) if isinstance(metadata, Mapping) else None
    if info is None:
        raise KeyError(NOT_YET)
    return dict(info)


def wait_for_attribution(response: object, timeout: float | None = None) -> dict[str, Any]:
    """The ``metadata["attribution"]`` of an answer, waiting (up to ``timeout`` seconds)
    for a stream's background attribution: its handle's
    :meth:`~camab_rag.attributor.Pending.result`.

    Raises:
        KeyError: a stream not read to the end yet (nothing to wait for).
        AttributionPendingError: not finished within ``timeout``, or an async stream's
            attribution still running in its event loop (``await await_attribution``).
    """
    job = getattr(response, ANSWER_JOB, None)
    if job is not None and not job.done():
        try:
            job.result(timeout)
        except AttributionPendingError as error:
            raise AttributionPendingError(
                f"{error} (for a response: await await_attribution(response))"
            ) from None
    return _info(response)


async def await_attribution(response: object) -> dict[str, Any]:
    """Async :func:`wait_for_attribution` (sync and async streams alike): its handle's
    :meth:`~camab_rag.attributor.Pending.aresult`; cancelling the caller leaves the
    attribution running."""
    job = getattr(response, ANSWER_JOB, None)
    if job is not None and not job.done():
        await job.aresult()
    return _info(response)


ToDocuments = Callable[[Sequence[Any]], list[Any]]


def answer_documents(
    answer: object,
    sources: Sequence[Any],
    retrieved: Sequence[Any],
    prompts: Sequence[Prompt],
    as_documents: ToDocuments | None = None,
) -> tuple[list[Any], bool]:
    """The documents to attribute ``answer`` to: its own ``sources``, else the
    ``retrieved`` documents when they reached the model (some of ``prompts`` holds them
    all); and whether they are its own sources. Raises a typed error when there are none."""
    if not isinstance(answer, str) or not answer.strip():
        raise InputError("the response is empty: there is nothing to attribute")
    if sources:
        return list(sources), True
    if not retrieved:
        raise NoContextError(
            "no nodes were retrieved for this query: the answer has no retrieved context "
            "to come from"
        )
    if as_documents is not None:
        as_documents(retrieved)  # a node the input gate refuses: its error, not "none reached"
    if not prompt_holds(prompts, retrieved, *([as_documents] if as_documents else [])):
        raise NoContextError(
            f"none of the {len(retrieved)} retrieved nodes reached the LLM "
            "(response.source_nodes is empty: e.g. a node post-processor discarded "
            "them all), so the answer has no retrieved context to come from"
        )
    return list(retrieved), False


@dataclass(frozen=True)
class AnswerAttribution:
    """An answer's attribution over ``documents`` (as the framework holds them;
    ``own_sources``: the answer's own, else retrieved ones)."""

    attributed: Any  # camab_rag.captured.CapturedAttribution
    documents: list[Any]
    own_sources: bool

    def metadata(self) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """The answer's summary (the result and the filter's verdict) and
        each document's entry (none unless the attribution is ok)."""
        result, verdict = self.attributed.result, self.attributed.verdict
        summary: dict[str, Any] = result.to_dict()
        entries: list[dict[str, Any]] = []
        if result.status == "ok":
            if result.prompt_mode != "captured":
                logger.info("camab attribution of %r: %s", result.question[:80], result.prompt_note)
            extra = {"method": result.method, "n_queries": result.n_queries}
            summaries = Attachment.of(result, self.documents, segments=True).documents
            entries = [{**entry, **extra} for entry in summaries]
        if verdict is not None:
            summary["groundedness"] = verdict.to_dict()
        return summary, entries

    @property
    def replacement(self) -> str | None:
        """A blocking filter's fallback for the answer (``None``: the answer stands)."""
        verdict = self.attributed.verdict
        return verdict.answer if verdict is not None and verdict.blocked else None
