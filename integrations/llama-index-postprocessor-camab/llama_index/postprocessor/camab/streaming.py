"""A streamed answer attributed in the background once its stream has been read to the
end (``metadata["attribution"]`` is pending until then; :func:`wait_for_attribution` /
:func:`await_attribution` wait). Tokens are pulled with the query's record in
:data:`~llama_index.postprocessor.camab.capture.STREAMING_FOR`, so the lazily started LLM
call is still captured for that query."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterable, Callable, Generator, Iterable
from typing import Any

from llama_index.core.base.response.schema import (
    AsyncStreamingResponse,
    Response,
    StreamingResponse,
)
from llama_index.postprocessor.camab.capture import QueryRecord, streaming_for
from llama_index.postprocessor.camab.response import ATTRIBUTION_KEY

from camab_rag.integration import ChainRuns, Steps, pending

HOW_TO_WAIT = (
    "Await await_attribution(response) before the event loop ends (e.g. at the end of the "
    "coroutine given to asyncio.run)"
)
JOB_ATTRIBUTE = "_camab_attribution_job"
"""Where a streamed answer keeps its background attribution (a future or a task)."""


def read_for(record: QueryRecord | None, tokens: Iterable[str]) -> Generator[str, None, None]:
    """``tokens``, pulled with ``record`` set as the query they are streamed for."""
    iterator = iter(tokens)
    while True:
        with streaming_for(record):
            try:
                token = next(iterator)
            except StopIteration:
                return
        yield token


async def aread_for(
    record: QueryRecord | None, tokens: AsyncIterable[str]
) -> AsyncGenerator[str, None]:
    """Async :func:`read_for`."""
    iterator = aiter(tokens)
    while True:
        with streaming_for(record):
            try:
                token = await anext(iterator)
            except StopAsyncIteration:
                return
        yield token


def start_after_stream(
    target: Any,
    steps: Steps[Any],
    carry: Callable[[], object],
    runs: ChainRuns[Any],
    *,
    in_loop: bool,
) -> None:
    """Run ``steps`` then ``carry()`` (result onto ``target``) in the background of
    ``runs``: a task of the running loop if ``in_loop``, else the worker thread."""

    def attributed() -> Steps[Any]:
        yield from steps
        carry()
        return target

    metadata = getattr(target, "metadata", None)
    if not isinstance(metadata, dict):
        metadata = {}
        target.metadata = metadata
    placeholder = metadata[ATTRIBUTION_KEY] = pending()
    if in_loop:
        job: Any = runs.astart(id(target), attributed(), [placeholder], HOW_TO_WAIT)
    else:
        job = runs.start(id(target), attributed())
    setattr(target, JOB_ATTRIBUTE, job)


def _job(response: object) -> Any:
    job = getattr(response, JOB_ATTRIBUTE, None)
    if job is None:
        metadata = getattr(response, "metadata", None)
        if isinstance(metadata, dict) and ATTRIBUTION_KEY in metadata:
            return None  # attributed when it returned (not streamed)
        raise KeyError(
            "this response has no attribution yet: a streamed answer is attributed once "
            "its stream has been read to the end"
        )
    return job


def wait_for_attribution(response: object, timeout: float | None = None) -> dict[str, Any]:
    """The ``metadata["attribution"]`` of an answer, waiting (up to ``timeout`` seconds)
    for the attribution of a sync stream that was read to the end.

    Raises:
        KeyError: a stream not read to the end yet (nothing to wait for).
        TypeError: an async stream's attribution: ``await await_attribution(response)``.
        TimeoutError: not finished within ``timeout``.
    """
    job = _job(response)
    if isinstance(job, asyncio.Task):
        raise TypeError(
            "an async stream's attribution runs in its event loop: await it with "
            "await_attribution(response)"
        )
    if job is not None:
        job.result(timeout)
    return dict(response.metadata[ATTRIBUTION_KEY])  # type: ignore[attr-defined]


async def await_attribution(response: object) -> dict[str, Any]:
    """Async :func:`wait_for_attribution` (for sync and async streams alike); cancelling
    the caller leaves the attribution running."""
    job = _job(response)
    if job is not None:
        await asyncio.shield(job if isinstance(job, asyncio.Task) else asyncio.wrap_future(job))
    return dict(response.metadata[ATTRIBUTION_KEY])  # type: ignore[attr-defined]


def attribute_when_consumed(
    response: StreamingResponse | AsyncStreamingResponse,
    steps_for: Callable[[Response], Steps[Any]],
    record: QueryRecord | None,
    runs: ChainRuns[Any],
) -> StreamingResponse | AsyncStreamingResponse:
    """The stream as it came; once read, ``steps_for(final)`` attribute the full answer
    in the background and its result lands on ``response`` (streamed text cannot be taken
    back, so a blocking verdict is only recorded)."""
    tokens = response.response_gen
    pieces: list[str] = []

    def finish(in_loop: bool) -> None:
        text = "".join(pieces)
        final = Response(text, list(response.source_nodes), dict(response.metadata or {}))

        def carry() -> None:
            response.source_nodes = final.source_nodes
            response.metadata = final.metadata
            if isinstance(response, StreamingResponse):
                response.response_txt = text

        start_after_stream(response, steps_for(final), carry, runs, in_loop=in_loop)

    if isinstance(response, AsyncStreamingResponse):

        async def aattributed() -> AsyncGenerator[str, None]:
            async for token in aread_for(record, tokens):  # type: ignore[arg-type]
                pieces.append(token)
                yield token
            finish(in_loop=True)

        response.response_gen = aattributed()
        return response

    def attributed() -> Generator[str, None, None]:
        for token in read_for(record, tokens):  # type: ignore[arg-type]
            pieces.append(token)
            yield token
        finish(in_loop=False)

    response.response_gen = attributed()
    return response
