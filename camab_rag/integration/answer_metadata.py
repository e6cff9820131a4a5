"""Read an answer's attribution back from its ``metadata["attribution"]``, waiting for
a streamed answer's background attribution: :func:`attribution_of`,
:func:`wait_for_attribution`, :func:`await_attribution` (re-exported by the LlamaIndex
package, whose answers carry their attribution there)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from camab_rag.integration.attached import METADATA_KEY
from camab_rag.integration.chain_runs import await_on, wait_on
from camab_rag.result import AttributionResult, check_finished

NOT_YET = (
    "this response has no attribution yet: a streamed answer is attributed once its stream "
    "has been read to the end"
)
WAIT = "wait_for_attribution(response) (or await await_attribution(response)), then read it"


def attribution_info(answer: object, hint: str = "") -> Any:
    """``answer.metadata["attribution"]``, else a ``KeyError`` (saying ``hint``)."""
    metadata = getattr(answer, "metadata", None)
    info = metadata.get(METADATA_KEY) if isinstance(metadata, Mapping) else None
    if info is None:
        raise KeyError(hint or f"the response has no metadata[{METADATA_KEY!r}]")
    return info


def set_attribution(answer: object, value: dict[str, Any]) -> None:
    """Set ``answer.metadata["attribution"]`` (creating the dict if needed)."""
    if not isinstance(getattr(answer, "metadata", None), dict):
        answer.metadata = {}  # type: ignore[attr-defined]
    answer.metadata[METADATA_KEY] = value  # type: ignore[attr-defined]


def attribution_of(response: object) -> AttributionResult:
    """The :class:`~camab_rag.AttributionResult` stored on a response.

    Raises:
        AttributionPendingError: its attribution is still running (a stream read to the
            end, not waited for): ``wait_for_attribution(response)`` first.
        AttributionCancelledError: its attribution was cancelled (its event loop ended).
        KeyError: the response carries no attribution (both errors above are ones too).
    """
    info = attribution_info(response)
    check_finished(info, WAIT)
    return AttributionResult.from_dict(info)


def wait_for_attribution(response: object, timeout: float | None = None) -> dict[str, Any]:
    """The ``metadata["attribution"]`` of an answer, waiting (up to ``timeout`` seconds)
    for the attribution of a sync stream that was read to the end.

    Raises:
        KeyError: a stream not read to the end yet (nothing to wait for).
        TypeError: an async stream's attribution: ``await await_attribution(response)``.
        TimeoutError: not finished within ``timeout``.
    """
    wait_on(response, timeout)
    return dict(attribution_info(response, hint=NOT_YET))


async def await_attribution(response: object) -> dict[str, Any]:
    """Async :func:`wait_for_attribution` (for sync and async streams alike); cancelling
    the caller leaves the attribution running."""
    await await_on(response)
    return dict(attribution_info(response, hint=NOT_YET))


__all__ = [
    "attribution_info",
    "attribution_of",
    "await_attribution",
    "set_attribution",
    "wait_for_attribution",
]
