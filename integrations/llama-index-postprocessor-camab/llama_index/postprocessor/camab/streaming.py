"""A streamed answer attributed once its stream has been consumed."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Awaitable, Callable, Generator

from llama_index.core.base.response.schema import (
    AsyncStreamingResponse,
    Response,
    StreamingResponse,
)


def attribute_when_consumed(
    response: StreamingResponse, attribute: Callable[[Response], object]
) -> StreamingResponse:
    """The stream as it came, attributed once consumed: right after its last token,
    ``attribute`` runs on the full ``Response`` and ``metadata["attribution"]`` and the
    source nodes of ``response`` carry the result (a blocking filter's verdict is recorded,
    but streamed text cannot be taken back)."""
    tokens = response.response_gen

    def attributed() -> Generator[str, None, None]:
        pieces = []
        for token in tokens:
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
    response: AsyncStreamingResponse, attribute: Callable[[Response], Awaitable[object]]
) -> AsyncStreamingResponse:
    """Async :func:`attribute_when_consumed` for ``aquery`` with ``streaming=True``."""
    tokens = response.response_gen

    async def attributed() -> AsyncGenerator[str, None]:
        pieces = []
        async for token in tokens:
            pieces.append(token)
            yield token
        final = Response("".join(pieces), list(response.source_nodes), response.metadata)
        await attribute(final)
        response.source_nodes = final.source_nodes
        response.metadata = final.metadata

    response.response_gen = attributed()
    return response
