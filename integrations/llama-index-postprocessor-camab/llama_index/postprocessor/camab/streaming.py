"""A streamed answer attributed once its stream has been consumed.

LlamaIndex makes a streamed answer's LLM call when its stream is first read, after the
query span has closed; while each token is pulled the query's record is set in
:data:`~llama_index.postprocessor.camab.capture.STREAMING_FOR`, so the prompt the LLM
receives is still captured for that query (and ablated in place of camab-rag's template).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterable, Awaitable, Callable, Generator, Iterable

from llama_index.core.base.response.schema import (
    AsyncStreamingResponse,
    Response,
    StreamingResponse,
)
from llama_index.postprocessor.camab.capture import QueryRecord, streaming_for


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


def attribute_when_consumed(
    response: StreamingResponse,
    attribute: Callable[[Response], object],
    record: QueryRecord | None = None,
) -> StreamingResponse:
    """The stream as it came, attributed once consumed: right after its last token,
    ``attribute`` runs on the full ``Response`` and ``metadata["attribution"]`` and the
    source nodes of ``response`` carry the result (a blocking filter's verdict is recorded,
    but streamed text cannot be taken back). ``record``: the query's capture record."""
    tokens = response.response_gen

    def attributed() -> Generator[str, None, None]:
        pieces = []
        for token in read_for(record, tokens):
            pieces.append(token)
            yield token
        final = Response("".join(pieces), list(response.source_nodes), response.metadata)
        attribute(final)
        response.source_nodes = final.source_nodes
        response.metadata = final.metadata
        response.response_txt = "".join(pieces)

    response.response_gen = attributed()
    return response


def aattribute_when_consumed(
    response: AsyncStreamingResponse,
    attribute: Callable[[Response], Awaitable[object]],
    record: QueryRecord | None = None,
) -> AsyncStreamingResponse:
    """Async :func:`attribute_when_consumed` for ``aquery`` with ``streaming=True``."""
    tokens = response.response_gen

    async def attributed() -> AsyncGenerator[str, None]:
        pieces = []
        async for token in aread_for(record, tokens):
            pieces.append(token)
            yield token
        final = Response("".join(pieces), list(response.source_nodes), response.metadata)
        await attribute(final)
        response.source_nodes = final.source_nodes
        response.metadata = final.metadata

    response.response_gen = attributed()
    return response
